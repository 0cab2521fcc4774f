/* The "mpi" collective backend: Open MPI, initialised lazily (only when a multi-worker group is created, so
 * the library works without mpirun). Every MPI call that waits on peers is nonblocking and polled against the
 * collective's deadline, so a dead or absent peer gives UNAVAILABLE instead of a hang; the communicator returns
 * errors instead of aborting (MPI_ERRORS_RETURN).
 *
 * Groups come from mpirun (MPI_COMM_WORLD) or from TF_CONFIG. Independently started processes (singletons)
 * can only connect through Open MPI's ompi-server (MPI_Comm_connect/accept need its publish/lookup service), so
 * the TF_CONFIG leader starts one as a child, sends its URI to the other tasks over a TCP connection to the
 * leader's TF_CONFIG address, and admits them one by one, in worker-id order, with MPI_Comm_accept/connect and
 * MPI_Intercomm_merge: ranks then equal worker ids. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <mpi.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "distribute/collective.h"

/* Liveness (TF_CONFIG groups): the bootstrap connections stay open. The leader holds one per task, each task
 * one to the leader; nothing is sent on them after the bootstrap, so a readable socket means its peer is gone
 * (the kernel closes a killed process's sockets). On a timeout the leader names the tasks whose connection
 * closed and tells the surviving tasks, which wait briefly for that notice, so every member names the dead task. */
typedef struct {
    MPI_Comm comm;
    int fds[TFC_CLUSTER_MAX_TASKS]; /* by worker id; -1: none */
    char member_fmt[48];
} mpi_impl;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static bool g_we_inited, g_finalized, g_broken;
static pid_t g_server = -1;
static char g_server_dir[64];

static void stop_server(void) {
    if (g_server > 0) {
        kill(g_server, SIGTERM);
        waitpid(g_server, NULL, 0);
        g_server = -1;
    }
    if (g_server_dir[0]) {
        char p[96];
        snprintf(p, sizeof p, "%s/uri", g_server_dir);
        unlink(p);
        rmdir(g_server_dir);
        g_server_dir[0] = 0;
    }
}

/* MPI_Finalize at exit (mpirun counts a process that exits without it as failed), unless a collective broke:
 * finalising with a dead peer could wait for it. */
static void at_exit(void) {
    if (g_we_inited && !g_finalized && !g_broken) {
        g_finalized = true;
        MPI_Finalize();
    }
    stop_server();
}

static bool mpi_error(int rc, const char *what, tfc_collective *c, tfc_status *st) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (c) c->broken = true;
    g_broken = true;
    return tfc_status_set(st, TFC_UNAVAILABLE, "%s on %s failed: %s (a peer task died or left the group)", what,
                          c ? c->task : "this task", msg);
}

static bool mpi_start(tfc_status *st) {
    pthread_mutex_lock(&g_mu);
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    bool ok = true;
    if (fin) {
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "MPI was finalized; a new multi-worker group cannot start");
    } else if (!inited) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS) ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "MPI_Init_thread failed (%d)", rc);
        else {
            g_we_inited = true;
            atexit(at_exit);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return ok;
}

static bool send_str(int fd, const char *s);
static bool recv_str(int fd, char *buf, size_t size, double deadline);

static bool peer_gone(int fd) {
    struct pollfd pf = {fd, POLLIN, 0};
    char b;
    return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR) || recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0);
}

/* Names the dead members into buf (see mpi_impl); false when nothing is known. */
static bool find_dead(tfc_collective *c, char *buf, size_t size) {
    mpi_impl *m = c->impl;
    int k = 0;
    buf[0] = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (c->rank == 0) {
        char ids[64] = "";
        int ni = 0;
        for (int r = 1; r < c->size; r++)
            if (m->fds[r] >= 0 && peer_gone(m->fds[r])) {
                char name[64];
                snprintf(name, sizeof name, m->member_fmt, r);
                k += snprintf(buf + k, size - (size_t)k, "%s%s", k ? ", " : "task ", name);
                ni += snprintf(ids + ni, sizeof ids - (size_t)ni, "%d,", r);
                if ((size_t)k >= size || (size_t)ni >= sizeof ids) break;
            }
        for (int r = 1; r < c->size && ni; r++) /* tell the others */
            if (m->fds[r] >= 0 && !peer_gone(m->fds[r])) send_str(m->fds[r], ids);
        if (k) snprintf(buf + strlen(buf), size - strlen(buf), " died: its connection to the leader closed");
        return k > 0;
    }
    int fd = m->fds[0];
    if (fd < 0) return false;
    char ids[64];
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 2000) != 1 || !recv_str(fd, ids, sizeof ids, tfc_coll_now() + 1)) {
        if (peer_gone(fd)) {
            char name[64];
            snprintf(name, sizeof name, m->member_fmt, 0);
            snprintf(buf, size, "task %s (the leader) died", name);
            return true;
        }
        return false;
    }
    for (char *p = ids; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p) break;
        char name[64];
        snprintf(name, sizeof name, m->member_fmt, (int)r);
        k += snprintf(buf + k, size - (size_t)k, "%s%s", k ? ", " : "task ", name);
        if ((size_t)k >= size) break;
        p = *end == ',' ? end + 1 : end;
    }
#pragma GCC diagnostic pop
    if (k && (size_t)k < size) snprintf(buf + k, size - (size_t)k, " died (reported by the leader)");
    return k > 0;
}

/* Polls a request until it completes or the collective's deadline passes. */
static bool wait_req(tfc_collective *c, MPI_Request *req, const char *what, tfc_status *st) {
    double dl = tfc_coll_now() + c->timeout;
    for (long spins = 0;; spins++) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_error(rc, what, c, st);
        if (done) return true;
        if ((spins & 255) == 0 && tfc_coll_now() > dl) {
            g_broken = true;
            tfc_coll_timeout(c, what, st);
            char dead[160];
            if (find_dead(c, dead, sizeof dead)) {
                char msg[sizeof st->msg];
                snprintf(msg, sizeof msg, "%s", st->msg);
                tfc_status_set(st, TFC_UNAVAILABLE, "%s (%s)", msg, dead);
            }
            return false;
        }
        if (spins > 20000) nanosleep(&(struct timespec){0, 20000}, NULL);
    }
}

#define CHUNK (1 << 28) /* elements per MPI call: counts are int */

static bool mpi_reduce(tfc_collective *c, const void *send, void *buf, int64_t count, tfc_dtype dt, tfc_status *st) {
    MPI_Comm comm = ((mpi_impl *)c->impl)->comm;
    MPI_Datatype t = dt == TFC_FLOAT ? MPI_FLOAT : dt == TFC_DOUBLE ? MPI_DOUBLE : dt == TFC_INT32 ? MPI_INT32_T : MPI_INT64_T;
    size_t esz = tfc_dtype_size(dt);
    for (int64_t off = 0; off < count; off += CHUNK) {
        int n = (int)(count - off < CHUNK ? count - off : CHUNK);
        MPI_Request req;
        const void *from = send == buf ? MPI_IN_PLACE : (const char *)send + (size_t)off * esz;
        int rc = MPI_Iallreduce(from, (char *)buf + (size_t)off * esz, n, t, MPI_SUM, comm, &req);
        if (rc != MPI_SUCCESS) return mpi_error(rc, "all_reduce", c, st);
        if (!wait_req(c, &req, "all_reduce", st)) return false;
    }
    return true;
}

static bool mpi_bcast(tfc_collective *c, void *buf, int64_t bytes, int root, tfc_status *st) {
    MPI_Comm comm = ((mpi_impl *)c->impl)->comm;
    for (int64_t off = 0; off < bytes; off += CHUNK) {
        int n = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
        MPI_Request req;
        int rc = MPI_Ibcast((char *)buf + off, n, MPI_BYTE, root, comm, &req);
        if (rc != MPI_SUCCESS) return mpi_error(rc, "broadcast", c, st);
        if (!wait_req(c, &req, "broadcast", st)) return false;
    }
    return true;
}

static bool mpi_gather(tfc_collective *c, const void *send, int64_t bytes, void *recv, const int64_t *bytes_of,
                       tfc_status *st) {
    MPI_Comm comm = ((mpi_impl *)c->impl)->comm;
    int counts[TFC_CLUSTER_MAX_TASKS], displs[TFC_CLUSTER_MAX_TASKS];
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) {
        if (bytes_of[r] > INT32_MAX || total > INT32_MAX)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "all_gather: more than 2 GiB gathered (%lld bytes)",
                                  (long long)(total + bytes_of[r]));
        counts[r] = (int)bytes_of[r];
        displs[r] = (int)total;
        total += bytes_of[r];
    }
    MPI_Request req;
    static const char empty;
    int rc = MPI_Iallgatherv(bytes ? send : &empty, (int)bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE, comm, &req);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "all_gather", c, st);
    return wait_req(c, &req, "all_gather", st);
}

static void mpi_destroy(tfc_collective *c) {
    mpi_impl *m = c->impl;
    if (m) {
        if (!c->broken && m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
        for (int i = 0; i < TFC_CLUSTER_MAX_TASKS; i++)
            if (m->fds[i] >= 0) close(m->fds[i]);
        tfc_free(m);
    }
    tfc_free(c);
}

static const tfc_coll_vt mpi_vt = {"mpi", mpi_reduce, mpi_bcast, mpi_gather, mpi_destroy};

/* ---- TF_CONFIG bootstrap over TCP ---------------------------------------------------------------------------- */
static bool split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn) {
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr) return false;
    size_t hl = (size_t)(colon - addr);
    if (addr[0] == '[' && hl >= 2 && addr[hl - 1] == ']') addr++, hl -= 2;
    if (hl >= hn) return false;
    memcpy(host, addr, hl);
    host[hl] = 0;
    snprintf(port, pn, "%s", colon + 1);
    return true;
}

static bool send_all(int fd, const void *p, size_t n) {
    for (const char *q = p; n;) {
        ssize_t k = send(fd, q, n, MSG_NOSIGNAL);
        if (k <= 0) {
            if (k < 0 && errno == EINTR) continue;
            return false;
        }
        q += k, n -= (size_t)k;
    }
    return true;
}

static bool recv_all(int fd, void *p, size_t n, double deadline) {
    for (char *q = p; n;) {
        int left = (int)((deadline - tfc_coll_now()) * 1000);
        if (left <= 0) return false;
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        ssize_t k = recv(fd, q, n, 0);
        if (k <= 0) return false;
        q += k, n -= (size_t)k;
    }
    return true;
}

static bool send_str(int fd, const char *s) {
    uint32_t n = (uint32_t)strlen(s);
    return send_all(fd, &n, 4) && send_all(fd, s, n);
}

static bool recv_str(int fd, char *buf, size_t size, double deadline) {
    uint32_t n = 0;
    if (!recv_all(fd, &n, 4, deadline) || n >= size) return false;
    buf[n] = 0;
    return recv_all(fd, buf, n, deadline);
}

static bool start_server(char *uri, size_t size, double deadline, tfc_status *st) {
    snprintf(g_server_dir, sizeof g_server_dir, "/tmp/tfc-ompi-server-XXXXXX");
    if (!mkdtemp(g_server_dir)) {
        g_server_dir[0] = 0;
        return tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: cannot create a temporary directory");
    }
    char path[96];
    snprintf(path, sizeof path, "%s/uri", g_server_dir);
    pid_t pid = fork();
    if (pid < 0) return tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: fork failed");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlives the leader */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execlp("ompi-server", "ompi-server", "--no-daemonize", "--report-uri", path, (char *)NULL);
        _exit(127);
    }
    g_server = pid;
    while (tfc_coll_now() < deadline) {
        FILE *f = fopen(path, "r");
        if (f) {
            bool got = fgets(uri, (int)size, f) != NULL;
            fclose(f);
            if (got && strchr(uri, '\n')) {
                *strchr(uri, '\n') = 0;
                return true;
            }
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            g_server = -1;
            return tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: ompi-server exited (status %d); "
                                  "is openmpi-bin installed?", status);
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    return tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: ompi-server gave no URI in time");
}

static int tcp_listen(const char *addr, tfc_status *st) {
    char host[256], port[16];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res = NULL;
    if (!split_addr(addr, host, sizeof host, port, sizeof port) || getaddrinfo(host, port, &hints, &res))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: cannot resolve the leader address \"%s\"", addr), -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, TFC_CLUSTER_MAX_TASKS)) {
        tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: cannot listen on %s: %s", addr, strerror(errno));
        if (fd >= 0) close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static int tcp_connect(const char *addr, double deadline, tfc_status *st) {
    char host[256], port[16];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (!split_addr(addr, host, sizeof host, port, sizeof port) || getaddrinfo(host, port, &hints, &res))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: cannot resolve the leader address \"%s\"", addr), -1;
    int fd = -1;
    while (tfc_coll_now() < deadline) {
        fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && !connect(fd, res->ai_addr, res->ai_addrlen)) break;
        if (fd >= 0) close(fd);
        fd = -1;
        nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    freeaddrinfo(res);
    if (fd < 0) tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: the leader at %s did not answer", addr);
    return fd;
}

/* Builds the communicator of a TF_CONFIG cluster (see the top of the file). */
static bool tf_config_comm(const tfc_cluster *cl, double timeout, MPI_Comm *out, int *keep_fds, tfc_status *st) {
    const char *leader = tfc_cluster_address(cl, "chief", 0);
    if (!leader) leader = tfc_cluster_address(cl, "worker", 0);
    int W = cl->num_workers, me = cl->worker_id;
    double deadline = tfc_coll_now() + timeout;
    int fds[TFC_CLUSTER_MAX_TASKS];
    for (int i = 0; i < TFC_CLUSTER_MAX_TASKS; i++) fds[i] = -1;
    char uri[1024] = "", port[MPI_MAX_PORT_NAME] = "";
    bool ok = true;
    int lfd = -1;
    if (me == 0) {
        if ((lfd = tcp_listen(leader, st)) < 0) return false;
        ok = start_server(uri, sizeof uri, deadline, st);
        for (int k = 1; ok && k < W; k++) { /* each task says its worker id */
            struct pollfd pf = {lfd, POLLIN, 0};
            int left = (int)((deadline - tfc_coll_now()) * 1000);
            int fd = left > 0 && poll(&pf, 1, left) == 1 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
            int32_t id = -1;
            if (fd < 0 || !recv_all(fd, &id, 4, deadline) || id < 1 || id >= W || fds[id] >= 0) {
                if (fd >= 0) close(fd);
                ok = tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: %d of %d tasks joined the "
                                    "leader at %s within %g s", k, W, leader, timeout);
                break;
            }
            fds[id] = fd;
        }
        for (int k = 1; ok && k < W; k++) ok = send_str(fds[k], uri);
    } else {
        int fd = tcp_connect(leader, deadline, st);
        int32_t id = me;
        ok = fd >= 0 && send_all(fd, &id, 4) && recv_str(fd, uri, sizeof uri, deadline);
        if (fd >= 0 && !ok && st->code == TFC_OK)
            tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: no answer from the leader at %s", leader);
        fds[0] = fd;
    }
    if (ok) {
        setenv("OMPI_MCA_pmix_server_uri", uri, 1);
        ok = mpi_start(st);
    }
    MPI_Comm intra = MPI_COMM_NULL;
    if (ok) {
        MPI_Comm_dup(MPI_COMM_SELF, &intra);
        MPI_Comm_set_errhandler(intra, MPI_ERRORS_RETURN);
    }
    if (ok && me == 0) MPI_Open_port(MPI_INFO_NULL, port);
    /* admit tasks 1..W-1 in order; a task takes part in the accepts after its own */
    for (int k = 1; ok && k < W; k++) {
        MPI_Comm inter, merged;
        int rc;
        if (me == k) {
            if (!recv_str(fds[0], port, sizeof port, deadline)) {
                ok = tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: no port from the leader");
                break;
            }
            rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        } else if (me < k) {
            if (me == 0 && !send_str(fds[k], port)) {
                ok = tfc_status_set(st, TFC_UNAVAILABLE, "MultiWorkerMirroredStrategy: task %d left", k);
                break;
            }
            rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, intra, &inter);
        } else {
            continue;
        }
        if (rc != MPI_SUCCESS) {
            ok = mpi_error(rc, "joining the group", NULL, st);
            break;
        }
        MPI_Intercomm_merge(inter, me == k, &merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&intra);
        intra = merged;
        MPI_Comm_set_errhandler(intra, MPI_ERRORS_RETURN);
    }
    if (me == 0 && port[0]) MPI_Close_port(port);
    for (int i = 0; i < TFC_CLUSTER_MAX_TASKS; i++) { /* kept for liveness (mpi_impl) */
        if (ok) keep_fds[i] = fds[i];
        else if (fds[i] >= 0) close(fds[i]);
    }
    if (lfd >= 0) close(lfd);
    if (!ok) {
        if (intra != MPI_COMM_NULL) MPI_Comm_free(&intra);
        return false;
    }
    *out = intra;
    return true;
}

tfc_collective *tfc_collective_mpi_new(const tfc_cluster *cl, double timeout, tfc_status *st) {
    tfc_collective *c = tfc_calloc(1, sizeof *c);
    mpi_impl *m = tfc_calloc(1, sizeof *m);
    if (!c || !m) {
        tfc_free(c);
        tfc_free(m);
        return tfc_status_oom(st, "collective", 0), NULL;
    }
    tfc_coll_init(c, &mpi_vt, 0, 1, timeout, "", "");
    m->comm = MPI_COMM_NULL;
    for (int i = 0; i < TFC_CLUSTER_MAX_TASKS; i++) m->fds[i] = -1;
    c->impl = m;
    bool ok;
    char task[64], fmt[48];
    if (cl && cl->num_workers > 1) {
        ok = tf_config_comm(cl, c->timeout, &m->comm, m->fds, st);
        bool chief_job = tfc_cluster_address(cl, "chief", 0) != NULL;
        snprintf(task, sizeof task, "/job:%s/replica:0/task:%d", cl->task_type, cl->task_id);
        /* members by worker id: chief 0, worker i at i + 1 (with a chief job) */
        snprintf(fmt, sizeof fmt, "%s", chief_job ? "worker id %d" : "/job:worker/replica:0/task:%d");
    } else {
        ok = mpi_start(st);
        if (ok) {
            MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
            MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
        }
        snprintf(fmt, sizeof fmt, "/job:worker/replica:0/task:%%d");
    }
    if (!ok) {
        mpi_destroy(c);
        return NULL;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(m->comm, &rank);
    MPI_Comm_size(m->comm, &size);
    if (!(cl && cl->num_workers > 1)) snprintf(task, sizeof task, "/job:worker/replica:0/task:%d", rank);
    if (size > TFC_CLUSTER_MAX_TASKS) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "MultiWorkerMirroredStrategy: %d workers (at most %d)", size,
                       TFC_CLUSTER_MAX_TASKS);
        mpi_destroy(c);
        return NULL;
    }
    tfc_coll_init(c, &mpi_vt, rank, size, timeout, task, fmt);
    snprintf(m->member_fmt, sizeof m->member_fmt, "%s", fmt);
    return c;
}
