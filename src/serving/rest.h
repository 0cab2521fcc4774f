/* Internal to src/serving: TensorFlow Serving's REST API (specs/serving_rest.md) as one function from a request
 * (method, path, body) to a response (HTTP status, JSON body), independent of the HTTP server (http.c) so tests
 * and fuzzers can call it directly. */
#ifndef TFC_SERVING_REST_H
#define TFC_SERVING_REST_H

#include "serving/json.h"
#include "serving/servable.h"

/* What srv_rest_handle answers. api is "predict", "classify", "regress", "status", "metadata" or "" (not an API
 * path or malformed), model the model named in the path ("" when none); both for metrics labels. */
typedef struct srv_rest_response {
    tfc_code code;     /* OK, or the error's canonical code */
    int http_status;   /* 200, or the HTTP code of the error's canonical code; 404 for paths outside /v1/ */
    srv_buf body;      /* application/json (free with srv_rest_response_clear) */
    const char *api;
    char model[128];
} srv_rest_response;

/* Handles one request. method is the HTTP method ("GET", "POST", ...), path the URL path without the query
 * string, body the request body (len bytes, may be NULL when 0). Never fails: errors become
 * {"error": "<message>"} with TensorFlow Serving's HTTP codes; out of memory becomes a 500 with a fixed body. */
void srv_rest_handle(tfc_srv_manager *m, const char *method, const char *path, const char *body, size_t len,
                     srv_rest_response *out);
void srv_rest_response_clear(srv_rest_response *r);

/* TensorFlow Serving's HTTP status of a canonical error code (OK 200, INVALID_ARGUMENT 400, NOT_FOUND 404, ...). */
int srv_http_status(tfc_code code);

#endif
