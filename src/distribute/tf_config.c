/* TF_CONFIG: TensorFlow's TFConfigClusterResolver and multi_worker_util rules (chief, worker numbering,
 * validation), without the gRPC server: the addresses serve tfc's own bootstrap (collective_mpi.c). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "tfc/distribute.h"

static const char *const valid_types[] = {"chief", "worker", "ps", "evaluator"};

void tfc_cluster_clear(tfc_cluster *c) {
    if (!c) return;
    for (int j = 0; j < c->n_jobs; j++)
        for (int i = 0; i < c->jobs[j].n_tasks; i++) tfc_free(c->jobs[j].address[i]);
    memset(c, 0, sizeof *c);
}

static tfc_cluster_job *find_job(const tfc_cluster *c, const char *name) {
    for (int j = 0; j < c->n_jobs; j++)
        if (!strcmp(c->jobs[j].name, name)) return (tfc_cluster_job *)&c->jobs[j];
    return NULL;
}

const char *tfc_cluster_address(const tfc_cluster *c, const char *job, int index) {
    const tfc_cluster_job *j = find_job(c, job);
    return j && index >= 0 && index < j->n_tasks ? j->address[index] : NULL;
}

char *tfc_cluster_leader(const tfc_cluster *c, char *buf, size_t size) {
    snprintf(buf, size, "/job:%s/replica:0/task:0", find_job(c, "chief") ? "chief" : "worker");
    return buf;
}

static bool set_addr(tfc_cluster_job *job, int idx, const cJSON *v, tfc_status *st) {
    if (!cJSON_IsString(v))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: cluster job \"%s\": task %d address must be a "
                              "string", job->name, idx);
    if (idx < 0 || idx >= TFC_CLUSTER_MAX_TASKS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: cluster job \"%s\": task index %d out of range "
                              "[0, %d)", job->name, idx, TFC_CLUSTER_MAX_TASKS);
    if (!(job->address[idx] = tfc_strdup(v->valuestring))) return tfc_status_oom(st, "TF_CONFIG", 0);
    if (idx >= job->n_tasks) job->n_tasks = idx + 1;
    return true;
}

static bool parse_cluster(const cJSON *cl, tfc_cluster *c, tfc_status *st) {
    if (!cJSON_IsObject(cl)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: \"cluster\" must be an object");
    for (const cJSON *j = cl->child; j; j = j->next) {
        bool known = false;
        for (int k = 0; k < 4; k++) known = known || !strcmp(j->string, valid_types[k]);
        if (!known)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: unknown job name \"%s\" in cluster (valid: "
                                  "chief, worker, ps, evaluator)", j->string);
        if (c->n_jobs == 4 || find_job(c, j->string))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: job \"%s\" given twice", j->string);
        tfc_cluster_job *job = &c->jobs[c->n_jobs++];
        snprintf(job->name, sizeof job->name, "%s", j->string);
        if (cJSON_IsArray(j)) {
            int i = 0;
            for (const cJSON *a = j->child; a; a = a->next, i++)
                if (!set_addr(job, i, a, st)) return false;
        } else if (cJSON_IsObject(j)) { /* sparse: {"1": "host:port"} */
            for (const cJSON *a = j->child; a; a = a->next) {
                char *end;
                long idx = strtol(a->string, &end, 10);
                if (*end || end == a->string)
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: job \"%s\": task index \"%s\" is "
                                          "not an integer", job->name, a->string);
                if (!set_addr(job, (int)idx, a, st)) return false;
            }
        } else {
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: job \"%s\" must be a list or a dict of "
                                  "addresses", j->string);
        }
    }
    const tfc_cluster_job *ch = find_job(c, "chief"), *ev = find_job(c, "evaluator");
    if (ch && ch->n_tasks > 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "There must be at most one 'chief' job (got %d tasks).", ch->n_tasks);
    if (ev && ev->n_tasks > 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "There must be at most one 'evaluator' job (got %d tasks).",
                              ev->n_tasks);
    return true;
}

bool tfc_cluster_resolve(const char *json, tfc_cluster *c, tfc_status *st) {
    memset(c, 0, sizeof *c);
    snprintf(c->rpc_layer, sizeof c->rpc_layer, "grpc");
    c->is_chief = true;
    c->num_workers = 1;
    if (!json) json = getenv("TF_CONFIG");
    if (!json) return true;
    const char *err = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &err, true);
    if (!root || !cJSON_IsObject(root)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG is not a JSON object (error at offset %ld of %zu)",
                       root ? 0L : (long)(err ? err - json : 0), strlen(json));
        cJSON_Delete(root);
        return false;
    }
    bool ok = true;
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(root, "cluster"), *task = cJSON_GetObjectItemCaseSensitive(root, "task");
    const cJSON *rpc = cJSON_GetObjectItemCaseSensitive(root, "rpc_layer");
    if (cJSON_IsString(rpc)) snprintf(c->rpc_layer, sizeof c->rpc_layer, "%s", rpc->valuestring);
    if (cl && !(ok = parse_cluster(cl, c, st))) goto done;
    const cJSON *type = task ? cJSON_GetObjectItemCaseSensitive(task, "type") : NULL;
    const cJSON *index = task ? cJSON_GetObjectItemCaseSensitive(task, "index") : NULL;
    if (c->n_jobs == 0) goto done; /* local mode */
    if (!cJSON_IsString(type)) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "When `cluster_spec` is given, you must also specify `task_type` and `task_id`.");
        goto done;
    }
    long idx = 0;
    if (cJSON_IsNumber(index)) idx = (long)index->valuedouble;
    else if (cJSON_IsString(index)) {
        char *end;
        idx = strtol(index->valuestring, &end, 10);
        if (*end || end == index->valuestring) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "TF_CONFIG: task index \"%s\" is not an integer", index->valuestring);
            goto done;
        }
    }
    snprintf(c->task_type, sizeof c->task_type, "%s", type->valuestring);
    c->task_id = (int)idx;
    bool known = false;
    for (int k = 0; k < 4; k++) known = known || !strcmp(c->task_type, valid_types[k]);
    const tfc_cluster_job *job = find_job(c, c->task_type);
    if (!known) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unrecognized task_type: '%s', valid task types are: \"chief\", "
                            "\"worker\", \"evaluator\" and \"ps\".", c->task_type);
    } else if (!job) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "`task_type` '%s' not found in cluster_spec.", c->task_type);
    } else if (idx < 0 || idx >= job->n_tasks || !job->address[idx]) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "The `task_id` %ld exceeds the maximum id of %s.", idx, c->task_type);
    }
    if (!ok) goto done;
    const tfc_cluster_job *ch = find_job(c, "chief"), *wk = find_job(c, "worker");
    bool has_chief = ch && ch->n_tasks > 0;
    c->num_workers = (has_chief ? 1 : 0) + (wk ? wk->n_tasks : 0);
    if (!strcmp(c->task_type, "chief")) {
        c->is_chief = true;
        c->worker_id = 0;
    } else if (!strcmp(c->task_type, "worker")) {
        c->is_chief = !has_chief && c->task_id == 0;
        c->worker_id = c->task_id + (has_chief ? 1 : 0);
    } else { /* evaluator: its own chief and its own group (worker_count counts only it); ps: not used */
        bool ev = !strcmp(c->task_type, "evaluator");
        c->is_chief = ev;
        c->worker_id = c->task_id;
        if (ev) c->num_workers = job->n_tasks;
    }
done:
    cJSON_Delete(root);
    if (!ok) tfc_cluster_clear(c);
    return ok;
}
