/* Internal to src/serving: the Prometheus metrics of --monitoring_config_file (TensorFlow Serving's names):
 *   :tensorflow:serving:request_count{entrypoint="REST",model_name,API,status}   counter
 *   :tensorflow:serving:request_latency{entrypoint="REST",model_name,API}        histogram, microseconds
 *   :tensorflow:serving:batching_session:processed_batch_size{model_name}       histogram (with batching)
 * Label sets are bounded (SRV_METRICS_MAX_ROWS; further distinct sets count under model_name="__other__"), so
 * hostile model names cannot grow memory. All functions are thread-safe and NULL-safe on m. */
#ifndef TFC_SERVING_METRICS_H
#define TFC_SERVING_METRICS_H

#include "serving/json.h"

#define SRV_METRICS_MAX_ROWS 256

typedef struct srv_metrics srv_metrics;

srv_metrics *srv_metrics_new(void); /* NULL when out of memory */
void srv_metrics_free(srv_metrics *m);
/* One finished request: model and api as srv_rest_response gives them, its canonical code, its latency. */
void srv_metrics_request(srv_metrics *m, const char *model, const char *api, tfc_code code, double seconds);
/* One batch run by the batcher: its size (real requests' rows) and the padded size actually run. */
void srv_metrics_batch(srv_metrics *m, const char *model, int64_t size, int64_t padded);
/* Appends the text exposition format (version 0.0.4). */
void srv_metrics_prometheus(srv_metrics *m, srv_buf *b);

#endif
