/* Sequential file input, plain or a whole-file GZIP / ZLIB stream (TensorFlow's compression_type; gzip members
 * may be concatenated). Messages do not name the file: callers prefix it with their context. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data/data_internal.h"

#define DEFAULT_BUFFER (256 * 1024)

enum { COMP_NONE, COMP_GZIP, COMP_ZLIB };

struct data_stream {
    int fd;
    int comp;
    uint8_t *in;              /* raw bytes read from the file */
    size_t cap, len, pos;     /* plain reading uses in[pos..len) */
    bool eof;                 /* no more raw bytes */
    int64_t size, consumed;   /* plain: file size and bytes handed out */
    z_stream z;
    bool z_init, z_end;
};

bool data_check_compression(const char *c, tfc_status *st) {
    if (!c || !*c || !strcmp(c, "GZIP") || !strcmp(c, "ZLIB")) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unsupported compression_type: \"%s\" (use \"\", \"GZIP\" or \"ZLIB\")",
                          c);
}

data_stream *data_stream_open(const char *path, const char *compression_type, int64_t buffer_size, tfc_status *st) {
    if (!data_check_compression(compression_type, st)) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        tfc_status_set(st, e == ENOENT ? TFC_NOT_FOUND : e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN, "%s: %s",
                       path, strerror(e));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode)) {
        tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: is a directory or cannot be read", path);
        close(fd);
        return NULL;
    }
    data_stream *s = tfc_calloc(1, sizeof *s);
    size_t cap = buffer_size > 0 ? (size_t)buffer_size : DEFAULT_BUFFER;
    if (cap > ((size_t)1 << 30)) cap = (size_t)1 << 30;
    /* buffer_size is a user number: a plain file needs no more than its size (at least a page) */
    if (!(compression_type && *compression_type) && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < cap)
        cap = sb.st_size < 4096 ? 4096 : (size_t)sb.st_size;
    if (s) s->in = tfc_malloc(cap);
    if (!s || !s->in) {
        if (s) tfc_free(s);
        close(fd);
        tfc_status_oom(st, "file buffer", cap);
        return NULL;
    }
    s->fd = fd;
    s->cap = cap;
    s->size = (int64_t)sb.st_size;
    s->comp = !compression_type || !*compression_type ? COMP_NONE : !strcmp(compression_type, "GZIP") ? COMP_GZIP
                                                                                                        : COMP_ZLIB;
    if (s->comp != COMP_NONE) {
        if (inflateInit2(&s->z, s->comp == COMP_GZIP ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK) {
            data_stream_close(s);
            tfc_status_oom(st, "zlib stream", 0);
            return NULL;
        }
        s->z_init = true;
    }
    return s;
}

/* Reads more raw bytes into in[0..len) (everything before pos has been used). */
static bool refill(data_stream *s, tfc_status *st) {
    if (s->eof) return true;
    size_t keep = s->len - s->pos;
    if (keep && s->pos) memmove(s->in, s->in + s->pos, keep);
    s->len = keep;
    s->pos = 0;
    while (s->len < s->cap) {
        ssize_t r = read(s->fd, s->in + s->len, s->cap - s->len);
        if (r < 0) {
            if (errno == EINTR) continue;
            return tfc_status_set(st, TFC_DATA_LOSS, "read error: %s", strerror(errno));
        }
        if (r == 0) {
            s->eof = true;
            break;
        }
        s->len += (size_t)r;
        break;
    }
    return true;
}

static bool read_plain(data_stream *s, uint8_t *buf, size_t n, size_t *got, tfc_status *st) {
    while (*got < n) {
        if (s->pos == s->len) {
            if (s->eof) break;
            /* large reads bypass the buffer */
            if (n - *got >= s->cap) {
                ssize_t r = read(s->fd, buf + *got, n - *got);
                if (r < 0) {
                    if (errno == EINTR) continue;
                    return tfc_status_set(st, TFC_DATA_LOSS, "read error: %s", strerror(errno));
                }
                if (r == 0) s->eof = true;
                *got += (size_t)r;
                continue;
            }
            if (!refill(s, st)) return false;
            continue;
        }
        size_t k = s->len - s->pos;
        if (k > n - *got) k = n - *got;
        memcpy(buf + *got, s->in + s->pos, k);
        s->pos += k;
        *got += k;
    }
    s->consumed += (int64_t)*got;
    return true;
}

static bool read_z(data_stream *s, uint8_t *buf, size_t n, size_t *got, tfc_status *st) {
    const char *kind = s->comp == COMP_GZIP ? "GZIP" : "ZLIB";
    while (*got < n && !s->z_end) {
        if (s->pos == s->len) {
            if (!refill(s, st)) return false;
            if (s->pos == s->len && s->eof)
                return tfc_status_set(st, TFC_DATA_LOSS, "%s stream ends early (truncated file)", kind);
        }
        s->z.next_in = s->in + s->pos;
        s->z.avail_in = (uInt)(s->len - s->pos);
        size_t want = n - *got;
        if (want > (1u << 30)) want = 1u << 30;
        s->z.next_out = buf + *got;
        s->z.avail_out = (uInt)want;
        int r = inflate(&s->z, Z_NO_FLUSH);
        s->pos = s->len - s->z.avail_in;
        *got += want - s->z.avail_out;
        if (r == Z_STREAM_END) {
            if (s->comp == COMP_ZLIB) {
                s->z_end = true;
                break;
            }
            /* a gzip file may hold several members */
            if (s->pos == s->len && !refill(s, st)) return false;
            if (s->pos == s->len && s->eof) {
                s->z_end = true;
                break;
            }
            inflateReset(&s->z);
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            return tfc_status_set(st, TFC_DATA_LOSS, "corrupt %s data (%s)", kind,
                                  s->z.msg ? s->z.msg : zError(r));
        }
    }
    return true;
}

bool data_stream_read(data_stream *s, void *buf, size_t n, size_t *got, tfc_status *st) {
    *got = 0;
    return s->comp == COMP_NONE ? read_plain(s, buf, n, got, st) : read_z(s, buf, n, got, st);
}

int64_t data_stream_remaining(const data_stream *s) {
    return s->comp == COMP_NONE ? s->size - s->consumed : -1;
}

void data_stream_close(data_stream *s) {
    if (!s) return;
    if (s->z_init) inflateEnd(&s->z);
    close(s->fd);
    tfc_free(s->in);
    tfc_free(s);
}
