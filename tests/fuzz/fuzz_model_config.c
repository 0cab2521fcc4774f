/* tfc serve's text protos: the input is parsed as a --model_config_file (ModelServerConfig) and as a
 * --monitoring_config_file (MonitoringConfig); a parsed config must hold what the parser promises. */
#include "fuzz_util.h"
#include "serving/servable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_config c;
    if (tfc_srv_config_parse((const char *)data, size, &c, &st)) {
        if (c.n_models < 1) abort();
        for (int i = 0; i < c.n_models; i++) {
            const tfc_srv_model_config *m = &c.models[i];
            if (!m->name || !*m->name || !m->base_path || !*m->base_path || m->num_versions < 1) abort();
            if (m->policy == TFC_SRV_POLICY_SPECIFIC && m->n_versions < 1) abort();
            for (int j = 0; j < m->n_labels; j++)
                if (!m->labels[j].label || m->labels[j].version < 0) abort();
        }
        tfc_srv_config_clear(&c);
    } else if (st.code == TFC_OK || c.n_models != 0) {
        abort();
    }
    bool enable;
    char path[256];
    if (!tfc_srv_monitoring_parse((const char *)data, size, &enable, path, sizeof path, &st) && st.code == TFC_OK)
        abort();
    return 0;
}
