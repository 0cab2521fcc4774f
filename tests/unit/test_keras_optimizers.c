/* Keras optimizers: three-step trajectories, optimizer weights and their names against tf_keras (both Keras
 * dialects, configs read with tfc_optimizer_from_config), one step of each optimizer against hand-computed
 * formulas, learning-rate schedules, clipping, gradient hooks, minimize, configs and errors. */
#include <cjson/cJSON.h>

#include "core/tensor_internal.h"
#include "tfc/keras.h"
#include "tfc/ops/reduction.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* Generated with tf_keras 2.21 (tf_keras.optimizers.legacy.* and the Keras 2.11+ optimizers): three
 * apply_gradients steps on variables a = [1, -2, 3] and b = [[0.5, 0.25], [-1, 2]] with the gradients of
 * ref_grads(); vals are a and b after each step, weights the optimizer's weights after the last step. */
static const struct opt_ref {
    const char *name, *config;
    double vals[3][7];
    int n_weights;
    double weights[40];
    const char *weight_names[12];
} opt_refs[] = {
    {"sgd",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": 0.1, \"decay\": 0.0, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.449999988, 0.275000006, -1.14999998, 1.995},
         {0.970000029, -1.96000004, 3, 0.349999994, 0.325000018, -1.45000005, 1.98500001},
         {0.940000057, -1.94000006, 2.97000003, 0.199999988, 0.400000036, -1.9000001, 1.97000003}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"sgd_mom",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": 0.1, \"decay\": 0.0, \"momentum\": 0.9, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.449999988, 0.275000006, -1.14999998, 1.995},
         {0.961000025, -1.94200003, 2.97300005, 0.305000007, 0.347499996, -1.58500004, 1.98049998},
         {0.904900014, -1.88779998, 2.94570017, 0.0245000124, 0.487749994, -2.42650008, 1.95245004}},
     3,
     {3, -0.0561000034, 0.0542000011, -0.0273000002, -0.280499995, 0.140249997, -0.841500044, -0.0280500017},
     {"SGD/iter:0", "SGD/a/momentum:0", "SGD/b/momentum:0"}},
    {"sgd_nest",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": 0.1, \"decay\": 0.0, \"momentum\": 0.9, \"nesterov\": true}, \"registered_name\": null}",
     {{0.981000006, -1.96200001, 2.94300008, 0.405000001, 0.297500014, -1.28500009, 1.99049997},
         {0.934899986, -1.90779996, 2.97570014, 0.174500018, 0.412750006, -1.97650003, 1.96745002},
         {0.854409993, -1.83902001, 2.92113018, -0.227949977, 0.613974988, -3.18385005, 1.92720497}},
     3,
     {3, -0.0561000034, 0.0542000011, -0.0273000002, -0.280499995, 0.140249997, -0.841500044, -0.0280500017},
     {"SGD/iter:0", "SGD/a/momentum:0", "SGD/b/momentum:0"}},
    {"sgd_decay",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": 0.1, \"decay\": 0.5, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.449999988, 0.275000006, -1.14999998, 1.995},
         {0.976666689, -1.9666667, 2.99000001, 0.383333325, 0.308333337, -1.35000002, 1.98833334},
         {0.961666703, -1.95666671, 2.9749999, 0.308333337, 0.345833331, -1.57500005, 1.98083329}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"adam",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adam\", \"config\": {\"name\": \"Adam\", \"learning_rate\": 0.01, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}, \"registered_name\": null}",
     {{0.990000308, -1.99000013, 2.99000001, 0.490000069, 0.259999871, -1.00999999, 1.99000061},
         {0.980348647, -1.98000026, 2.99052644, 0.480348319, 0.269651592, -1.01965177, 1.98034906},
         {0.97076869, -1.97000027, 2.98716855, 0.470768303, 0.279231608, -1.02923179, 1.97076917}},
     5,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.280500054, -0.140250027, 0.841500163, 0.0280500054, 0.000139938216, 0.000119878503, 0.000269726617, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05},
     {"Adam/iter:0", "Adam/a/m:0", "Adam/b/m:0", "Adam/a/v:0", "Adam/b/v:0"}},
    {"adam_ams",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adam\", \"config\": {\"name\": \"Adam\", \"learning_rate\": 0.01, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": true}, \"registered_name\": null}",
     {{0.990000308, -1.99000013, 2.99000001, 0.490000069, 0.259999871, -1.00999999, 1.99000061},
         {0.980348647, -1.98000026, 2.99052644, 0.480348319, 0.269651592, -1.01965177, 1.98034906},
         {0.97076869, -1.97000027, 2.98716855, 0.470768303, 0.279231608, -1.02923179, 1.97076917}},
     7,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.280500054, -0.140250027, 0.841500163, 0.0280500054, 0.000139938216, 0.000119878503, 0.000269726617, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05, 0.000139938216, 0.000119878503, 0.000269726617, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05},
     {"Adam/iter:0", "Adam/a/m:0", "Adam/b/m:0", "Adam/a/v:0", "Adam/b/v:0", "Adam/a/vhat:0", "Adam/b/vhat:0"}},
    {"rmsprop",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"learning_rate\": 0.01, \"decay\": 0.0, \"rho\": 0.9, \"momentum\": 0.0, \"epsilon\": 1e-07, \"centered\": false}, \"registered_name\": null}",
     {{0.968377352, -1.96837723, 2.96837735, 0.468377233, 0.281622738, -1.03162277, 1.96837747},
         {0.939805984, -1.94543564, 2.99131894, 0.439805806, 0.310194135, -1.06019413, 1.9398061},
         {0.913899601, -1.92622614, 2.97210956, 0.413899422, 0.336100519, -1.08610046, 1.91389978}},
     3,
     {3, 0.0134100039, 0.0108400024, 0.0243900064, 0.33525008, 0.0838125199, 3.01725078, 0.00335250096},
     {"RMSprop/iter:0", "RMSprop/a/rms:0", "RMSprop/b/rms:0"}},
    {"rmsprop_c",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"learning_rate\": 0.01, \"decay\": 0.0, \"rho\": 0.9, \"momentum\": 0.0, \"epsilon\": 1e-07, \"centered\": true}, \"registered_name\": null}",
     {{0.966666758, -1.9666667, 2.9666667, 0.466666698, 0.283333302, -1.0333333, 1.96666694},
         {0.93527472, -1.94117606, 2.98961425, 0.435274601, 0.314725399, -1.0647254, 1.93527496},
         {0.905661345, -1.91867769, 2.97010446, 0.405661196, 0.344338804, -1.09433877, 1.90566158}},
     5,
     {3, 0.0134100039, 0.0108400024, 0.0243900064, 0.33525008, 0.0838125199, 3.01725078, 0.00335250096, 0.0561000146, -0.054200016, 0.0273000076, 0.280500054, -0.140250027, 0.841500163, 0.0280500073},
     {"RMSprop/iter:0", "RMSprop/a/rms:0", "RMSprop/b/rms:0", "RMSprop/a/mg:0", "RMSprop/b/mg:0"}},
    {"rmsprop_m",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"learning_rate\": 0.01, \"decay\": 0.0, \"rho\": 0.9, \"momentum\": 0.5, \"epsilon\": 1e-07, \"centered\": false}, \"registered_name\": null}",
     {{0.968378782, -1.96837759, 2.96837735, 0.468377292, 0.281622529, -1.03162277, 1.96838355},
         {0.923997045, -1.92962503, 2.9755075, 0.423994541, 0.326005161, -1.07600558, 1.92400503},
         {0.875899911, -1.89103937, 2.95986319, 0.375896782, 0.374102861, -1.12410331, 1.87590981}},
     5,
     {3, 0.0134100039, 0.0108400024, 0.0243900064, 0.33525008, 0.0838125199, 3.01725054, 0.00335250096, 0.0480971523, -0.0385856852, 0.0156443268, 0.0480977632, -0.0480976887, 0.0480977856, 0.0480952412},
     {"RMSprop/iter:0", "RMSprop/a/rms:0", "RMSprop/b/rms:0", "RMSprop/a/momentum:0", "RMSprop/b/momentum:0"}},
    {"rmsprop_mc",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"learning_rate\": 0.01, \"decay\": 0.0, \"rho\": 0.9, \"momentum\": 0.5, \"epsilon\": 1e-07, \"centered\": true}, \"registered_name\": null}",
     {{0.966668546, -1.96666718, 2.96666694, 0.466666758, 0.283333033, -1.0333333, 1.96667409},
         {0.918611109, -1.92451036, 2.97294784, 0.41860804, 0.331391603, -1.08139205, 1.91862059},
         {0.864969134, -1.88093364, 2.95657849, 0.36496526, 0.385034263, -1.1350348, 1.86498094}},
     7,
     {3, 0.0134100039, 0.0108400024, 0.0243900064, 0.33525008, 0.0838125199, 3.01725054, 0.00335250096, 0.0536419973, -0.0435766876, 0.0163693316, 0.0536427647, -0.0536426678, 0.0536427945, 0.0536395982, 0.0561000109, -0.054200016, 0.0273000058, 0.280500054, -0.140250027, 0.841500163, 0.0280500054},
     {"RMSprop/iter:0", "RMSprop/a/rms:0", "RMSprop/b/rms:0", "RMSprop/a/momentum:0", "RMSprop/b/momentum:0", "RMSprop/a/mg:0", "RMSprop/b/mg:0"}},
    {"adagrad",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adagrad\", \"config\": {\"name\": \"Adagrad\", \"learning_rate\": 0.1, \"decay\": 0.0, \"initial_accumulator_value\": 0.1, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.969848871, -1.94654775, 2.93117523, 0.415484607, 0.312017351, -1.09784925, 1.98438263},
         {0.918209076, -1.89940727, 2.98786998, 0.329418331, 0.389867246, -1.18689704, 1.95456839},
         {0.85697186, -1.85676718, 2.93855023, 0.250361383, 0.465822697, -1.26694846, 1.91374362}},
     3,
     {3, 0.24000001, 0.220000014, 0.370000005, 3.5999999, 0.975000024, 31.6000004, 0.13499999},
     {"Adagrad/iter:0", "Adagrad/a/accumulator:0", "Adagrad/b/accumulator:0"}},
    {"adamax",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adamax\", \"config\": {\"name\": \"Adamax\", \"learning_rate\": 0.01, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.99000001, -1.99000001, 2.99000001, 0.49000001, 0.25999999, -1.00999999, 1.99000001},
         {0.98236841, -1.98000002, 2.99052644, 0.482368439, 0.267631561, -1.01763153, 1.98236847},
         {0.97546804, -1.97000003, 2.98716855, 0.475468069, 0.274531931, -1.02453184, 1.97546816}},
     5,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.280500054, -0.140250027, 0.841500163, 0.0280500054, 0.300000012, 0.200000003, 0.300000012, 1.5, 0.75, 4.5, 0.150000006},
     {"Adamax/iter:0", "Adamax/a/m:0", "Adamax/b/m:0", "Adamax/a/v:0", "Adamax/b/v:0"}},
    {"nadam",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Nadam\", \"config\": {\"name\": \"Nadam\", \"learning_rate\": 0.01, \"decay\": 0.004, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.989435494, -1.98943543, 2.98943543, 0.489435494, 0.260564506, -1.01056457, 1.98943555},
         {0.979806066, -1.98159862, 2.99638057, 0.479806066, 0.270193934, -1.02019405, 1.97980618},
         {0.970188022, -1.97427642, 2.98990369, 0.470188051, 0.279811949, -1.0298121, 1.97018814}},
     6,
     {3, 0.0912142769, 0.0561000146, -0.054200016, 0.0273000076, 0.280500054, -0.140250027, 0.841500163, 0.0280500073, 0.000139938216, 0.000119878503, 0.000269726617, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05},
     {"Nadam/iter:0", "Nadam/momentum_cache:0", "Nadam/a/m:0", "Nadam/b/m:0", "Nadam/a/v:0", "Nadam/b/v:0"}},
    {"adam_clipnorm",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adam\", \"config\": {\"name\": \"Adam\", \"clipnorm\": 0.5, \"learning_rate\": 0.01, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}, \"registered_name\": null}",
     {{0.990000308, -1.99000013, 2.99000001, 0.490000188, 0.259999603, -1.00999999, 1.99000204},
         {0.980348647, -1.98000026, 2.99052644, 0.480000377, 0.269999295, -1.01999986, 1.98000348},
         {0.97076869, -1.97000027, 2.98716855, 0.470000476, 0.279999077, -1.02999985, 1.97000456}},
     5,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.0423024669, -0.0211512335, 0.126907408, 0.00423024688, 0.000139938216, 0.000119878503, 0.000269726617, 7.30254033e-05, 1.82563508e-05, 0.000657228578, 7.30254101e-07},
     {"Adam/iter:0", "Adam/a/m:0", "Adam/b/m:0", "Adam/a/v:0", "Adam/b/v:0"}},
    {"adam_clipvalue",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"clipvalue\": 0.3, \"learning_rate\": 0.1, \"decay\": 0.0, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.469999999, 0.275000006, -1.02999997, 1.995},
         {0.970000029, -1.96000004, 3, 0.439999998, 0.305000007, -1.05999994, 1.98500001},
         {0.940000057, -1.94000006, 2.97000003, 0.409999996, 0.335000008, -1.08999991, 1.97000003}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"sgd_gclip",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"global_clipnorm\": 1.0, \"learning_rate\": 0.1, \"decay\": 0.0, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.993919849, -1.9878397, 2.98175955, 0.469599098, 0.265200436, -1.09120274, 1.99695992},
         {0.987727046, -1.9816469, 2.99104881, 0.438635051, 0.280682474, -1.18409491, 1.99386346},
         {0.981512666, -1.97750401, 2.98483443, 0.407563239, 0.296218395, -1.27731037, 1.99075627}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"adam_expdecay",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"Adam\", \"config\": {\"name\": \"Adam\", \"learning_rate\": {\"module\": \"keras.optimizers.schedules\", \"class_name\": \"ExponentialDecay\", \"config\": {\"initial_learning_rate\": 0.01, \"decay_steps\": 2, \"decay_rate\": 0.5, \"staircase\": false, \"name\": null}, \"registered_name\": null}, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}, \"registered_name\": null}",
     {{0.990000308, -1.99000013, 2.99000001, 0.490000069, 0.259999871, -1.00999999, 1.99000061},
         {0.983175576, -1.98292911, 2.99037218, 0.483175248, 0.266824663, -1.01682484, 1.98317599},
         {0.978385568, -1.97792912, 2.98869324, 0.47838524, 0.271614671, -1.02161491, 1.97838604}},
     5,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.280500054, -0.140250027, 0.841500163, 0.0280500054, 0.000139938216, 0.000119878503, 0.000269726617, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05},
     {"Adam/iter:0", "Adam/a/m:0", "Adam/b/m:0", "Adam/a/v:0", "Adam/b/v:0"}},
    {"sgd_piecewise",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": {\"module\": \"keras.optimizers.schedules\", \"class_name\": \"PiecewiseConstantDecay\", \"config\": {\"boundaries\": [0, 1], \"values\": [0.1, 0.05, 0.01], \"name\": null}, \"registered_name\": null}, \"decay\": 0.0, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.449999988, 0.275000006, -1.14999998, 1.995},
         {0.980000019, -1.97000003, 2.98500013, 0.399999976, 0.300000012, -1.29999995, 1.99000001},
         {0.976999998, -1.96800005, 2.98200011, 0.38499999, 0.307500005, -1.34499991, 1.9885}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"sgd_cosine",
     "{\"module\": \"keras.optimizers.legacy\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"learning_rate\": {\"module\": \"keras.optimizers.schedules\", \"class_name\": \"CosineDecay\", \"config\": {\"initial_learning_rate\": 0.1, \"decay_steps\": 4, \"alpha\": 0.1, \"name\": null, \"warmup_target\": null, \"warmup_steps\": 0}, \"registered_name\": null}, \"decay\": 0.0, \"momentum\": 0.0, \"nesterov\": false}, \"registered_name\": null}",
     {{0.99000001, -1.98000002, 2.97000003, 0.449999988, 0.275000006, -1.14999998, 1.995},
         {0.972636044, -1.96263611, 2.99604607, 0.363180161, 0.31840992, -1.4104594, 1.98631799},
         {0.956136048, -1.95163608, 2.97954607, 0.28068018, 0.35965991, -1.65795934, 1.97806799}},
     1,
     {3},
     {"SGD/iter:0"}},
    {"new_adamw",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"AdamW\", \"config\": {\"name\": \"AdamW\", \"weight_decay\": 0.1, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}, \"registered_name\": null}",
     {{0.98900038, -1.98800027, 2.98700023, 0.489500135, 0.2597498, -1.00899994, 1.98800075},
         {0.978359759, -1.97601247, 2.98453951, 0.479358941, 0.269141704, -1.01764262, 1.97636127},
         {0.967801511, -1.96403658, 2.9781971, 0.469299614, 0.278452516, -1.02620494, 1.96480513}},
     5,
     {3, 0.0561000034, -0.0542000011, 0.0272999983, 0.000139940021, 0.000119880053, 0.00026973011, 0.280499995, -0.140249997, 0.841500044, 0.0280500017, 0.00349850045, 0.000874625111, 0.0314865038, 3.49850052e-05},
     {"iteration:0", "AdamW/m/a:0", "AdamW/v/a:0", "AdamW/m/b:0", "AdamW/v/b:0"}},
    {"new_nadam",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"Nadam\", \"config\": {\"name\": \"Nadam\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.989372134, -1.98937213, 2.98937201, 0.489372134, 0.260627866, -1.01062787, 1.98937213},
         {0.979910791, -1.98163629, 2.99608827, 0.479910761, 0.270089239, -1.02008927, 1.97991073},
         {0.97067678, -1.97452295, 2.98996544, 0.47067675, 0.27932325, -1.02932322, 1.97067678}},
     5,
     {3, 0.0561000109, -0.054200016, 0.0273000058, 0.000139938216, 0.000119878503, 0.000269726617, 0.280500054, -0.140250027, 0.841500163, 0.0280500054, 0.00349845504, 0.000874613761, 0.0314860977, 3.49845541e-05},
     {"iteration:0", "Nadam/m/a:0", "Nadam/v/a:0", "Nadam/m/b:0", "Nadam/v/b:0"}},
    {"new_rmsprop",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": 100, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"rho\": 0.9, \"momentum\": 0.0, \"epsilon\": 1e-07, \"centered\": false}, \"registered_name\": null}",
     {{0.968378782, -1.96837759, 2.96837735, 0.468377292, 0.281622529, -1.03162277, 1.96838355},
         {0.939807653, -1.94543612, 2.99131894, 0.439805865, 0.310193896, -1.06019425, 1.93981326},
         {0.913901389, -1.92622674, 2.97210956, 0.413899481, 0.33610028, -1.0861007, 1.91390729}},
     3,
     {3, 0.0134100001, 0.0108400006, 0.0243900008, 0.33525002, 0.083812505, 3.01725006, 0.00335250003},
     {"iteration:0", "RMSprop/velocity/a:0", "RMSprop/velocity/b:0"}},
    {"new_rmsprop_mc",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"RMSprop\", \"config\": {\"name\": \"RMSprop\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": 100, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"rho\": 0.9, \"momentum\": 0.5, \"epsilon\": 1e-07, \"centered\": true}, \"registered_name\": null}",
     {{0.966668546, -1.96666718, 2.96666694, 0.466666758, 0.283333033, -1.0333333, 1.96667409},
         {0.918611109, -1.92451036, 2.97294784, 0.41860804, 0.331391603, -1.08139205, 1.91862059},
         {0.864969134, -1.88093364, 2.95657849, 0.36496526, 0.385034263, -1.1350348, 1.86498094}},
     7,
     {3, 0.0134100001, 0.0108400006, 0.0243900008, 0.33525002, 0.083812505, 3.01725006, 0.00335250003, 0.0536420047, -0.0435766876, 0.0163693335, 0.0536427721, -0.0536426753, 0.0536427982, 0.0536396056, 0.0561000034, -0.0542000011, 0.0273000002, 0.280499995, -0.140249997, 0.841500044, 0.0280500017},
     {"iteration:0", "RMSprop/velocity/a:0", "RMSprop/velocity/b:0", "RMSprop/momentum/a:0", "RMSprop/momentum/b:0", "RMSprop/average_gradient/a:0", "RMSprop/average_gradient/b:0"}},
    {"new_adagrad",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"Adagrad\", \"config\": {\"name\": \"Adagrad\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.10000000149011612, \"initial_accumulator_value\": 0.1, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.969848871, -1.94654775, 2.93117523, 0.415484577, 0.312017351, -1.09784925, 1.98438263},
         {0.918209076, -1.89940727, 2.98786998, 0.329418272, 0.389867246, -1.18689704, 1.95456839},
         {0.85697186, -1.85676718, 2.93855023, 0.250361323, 0.465822697, -1.26694846, 1.91374362}},
     3,
     {3, 0.24000001, 0.220000014, 0.370000005, 3.5999999, 0.975000024, 31.6000004, 0.13499999},
     {"iteration:0", "Adagrad/accumulator/a:0", "Adagrad/accumulator/b:0"}},
    {"new_adam",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"Adam\", \"config\": {\"name\": \"Adam\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": true}, \"registered_name\": null}",
     {{0.990000367, -1.99000025, 2.99000025, 0.490000129, 0.259999812, -1.00999987, 1.99000072},
         {0.980348766, -1.9800005, 2.99052644, 0.480348438, 0.269651473, -1.01965153, 1.9803493},
         {0.970768869, -1.97000062, 2.98716855, 0.470768481, 0.279231429, -1.02923155, 1.97076952}},
     7,
     {3, 0.0561000034, -0.0542000011, 0.0272999983, 0.000139940021, 0.000119880053, 0.00026973011, 0.280499995, -0.140249997, 0.841500044, 0.0280500017, 0.00349850045, 0.000874625111, 0.0314865038, 3.49850052e-05, 0.000139940021, 0.000119880053, 0.00026973011, 0.00349850045, 0.000874625111, 0.0314865038, 3.49850052e-05},
     {"iteration:0", "Adam/m/a:0", "Adam/v/a:0", "Adam/m/b:0", "Adam/v/b:0", "Adam/vhat/a:0", "Adam/vhat/b:0"}},
    {"new_sgd",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", \"weight_decay\": null, \"clipnorm\": 0.5, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.10000000149011612, \"momentum\": 0.9, \"nesterov\": true}, \"registered_name\": null}",
     {{0.981000006, -1.96200001, 2.94300008, 0.470341444, 0.264829278, -1.08897567, 1.99703419},
         {0.934899986, -1.90779996, 2.97570014, 0.428038985, 0.285980523, -1.21588302, 1.99280393},
         {0.854409993, -1.83902001, 2.92113018, 0.374357015, 0.312821507, -1.37692893, 1.9874357}},
     3,
     {3, -0.0561000034, 0.0542000011, -0.0273000002, -0.0423024595, 0.0211512297, -0.126907378, -0.00423024595},
     {"iteration:0", "SGD/m/a:0", "SGD/m/b:0"}},
    {"new_adamax",
     "{\"module\": \"keras.optimizers\", \"class_name\": \"Adamax\", \"config\": {\"name\": \"Adamax\", \"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": 0.009999999776482582, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07}, \"registered_name\": null}",
     {{0.99000001, -1.99000001, 2.99000001, 0.49000001, 0.25999999, -1.00999999, 1.99000001},
         {0.98236841, -1.98000002, 2.99052644, 0.482368439, 0.267631561, -1.01763153, 1.98236847},
         {0.97546804, -1.97000003, 2.98716855, 0.475468069, 0.274531931, -1.02453184, 1.97546816}},
     5,
     {3, 0.0561000034, -0.0542000011, 0.0272999983, 0.300000012, 0.200000003, 0.300000012, 0.280499995, -0.140249997, 0.841500044, 0.0280500017, 1.5, 0.75, 4.5, 0.150000006},
     {"iteration:0", "Adamax/m/a:0", "Adamax/u/a:0", "Adamax/m/b:0", "Adamax/u/b:0"}},
};

static tfc_tensor *f32(const double *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, rank, &st);
    REQUIRE(t);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) p[i] = (float)v[i];
    return t;
}

static tfc_variable *var_f32(const char *name, const double *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = f32(v, dims, rank);
    tfc_variable *var = tfc_variable_new(ctx, t, true, name, &st);
    REQUIRE(var);
    tfc_tensor_unref(t);
    return var;
}

static double vv(tfc_variable *v, int64_t i) { return tfc_tensor_get_f64(tfc_variable_value(v), i); }

/* The gradients of step t (as the generator script): a: [0.1 (t+1), -0.2, 0.3 (-1)^t], b: [[0.5, -0.25],
 * [1.5, 0.05]] * (t+1). */
static void ref_grads(int t, tfc_tensor **g) {
    double a[3] = {0.1 * (t + 1), -0.2, 0.3 * (t % 2 ? -1 : 1)};
    double b[4] = {0.5, -0.25, 1.5, 0.05};
    for (int i = 0; i < 4; i++) b[i] = (double)((float)b[i] * (float)(t + 1));
    g[0] = f32(a, (int64_t[]){3}, 1);
    g[1] = f32(b, (int64_t[]){2, 2}, 2);
}

static void check_close(const char *what, const char *name, double got, double want, double tol) {
    CHECK_NEAR(got, want, tol);
    if (!(fabs(got - want) <= tol * (1 + fabs(want)))) fprintf(stderr, "  (%s, %s)\n", name, what);
}

static void test_tf_keras_refs(void) {
    for (size_t c = 0; c < sizeof opt_refs / sizeof *opt_refs; c++) {
        const struct opt_ref *r = &opt_refs[c];
        tfc_status st = TFC_STATUS_INIT;
        tfc_optimizer *o = tfc_optimizer_from_config(NULL, r->config, &st);
        CHECK_OK(&st);
        if (!o) {
            fprintf(stderr, "  (%s: from_config failed)\n", r->name);
            continue;
        }
        tfc_variable *v[2] = {var_f32("a:0", (double[]){1, -2, 3}, (int64_t[]){3}, 1),
                              var_f32("b:0", (double[]){0.5, 0.25, -1, 2}, (int64_t[]){2, 2}, 2)};
        for (int t = 0; t < 3; t++) {
            tfc_tensor *g[2];
            ref_grads(t, g);
            CHECK(tfc_optimizer_apply_gradients(o, ctx, g, v, 2, &st));
            CHECK_OK(&st);
            for (int i = 0; i < 7; i++)
                check_close("vals", r->name, i < 3 ? vv(v[0], i) : vv(v[1], i - 3), r->vals[t][i], 2e-6);
            tfc_tensor_unref(g[0]);
            tfc_tensor_unref(g[1]);
        }
        CHECK(tfc_optimizer_iterations(o) == 3);
        tfc_variable *w[12];
        int n = tfc_optimizer_variables(o, w, 12);
        CHECK(n == r->n_weights);
        if (n != r->n_weights) fprintf(stderr, "  (%s: %d weights, expected %d)\n", r->name, n, r->n_weights);
        int k = 0;
        for (int i = 0; i < n && i < r->n_weights; i++) {
            CHECK(!strcmp(tfc_variable_name(w[i]), r->weight_names[i]));
            if (strcmp(tfc_variable_name(w[i]), r->weight_names[i]))
                fprintf(stderr, "  (%s: weight %d is %s, expected %s)\n", r->name, i, tfc_variable_name(w[i]),
                        r->weight_names[i]);
            for (int64_t j = 0; j < tfc_tensor_num_elements(tfc_variable_value(w[i])) && k < 40; j++, k++)
                check_close("weights", r->name, vv(w[i], j), r->weights[k], 5e-6);
        }
        /* get_config reads back into an equal optimizer */
        char *cfg = tfc_optimizer_get_config(o, &st);
        REQUIRE(cfg);
        cJSON *ours = cJSON_Parse(cfg), *theirs = cJSON_Parse(r->config);
        REQUIRE(ours && theirs);
        const cJSON *tc = cJSON_GetObjectItem(theirs, "config");
        bool same = cJSON_Compare(ours, tc, true);
        CHECK(same);
        if (!same) fprintf(stderr, "  (%s: config %s\n   expected %s)\n", r->name, cfg, cJSON_PrintUnformatted(tc));
        cJSON_Delete(ours);
        cJSON_Delete(theirs);
        tfc_free(cfg);
        tfc_optimizer_free(o);
        tfc_variable_free(v[0]);
        tfc_variable_free(v[1]);
    }
}

/* One step on w = [1, -2] with g = [0.5, -1] (float32) for each constructor, against the formulas. */
static void one_step(tfc_optimizer *o, double *out) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w = var_f32("w:0", (double[]){1, -2}, (int64_t[]){2}, 1);
    tfc_tensor *g = f32((double[]){0.5, -1}, (int64_t[]){2}, 1);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK_OK(&st);
    out[0] = vv(w, 0), out[1] = vv(w, 1);
    tfc_tensor_unref(g);
    tfc_variable_free(w);
    tfc_optimizer_free(o);
}

static void test_one_step(void) {
    const double w0[2] = {1, -2}, g[2] = {0.5, -1};
    double out[2];
    one_step(tfc_optimizers_sgd(), out); /* lr 0.01 */
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.01 * g[i], 1e-6);
    one_step(tfc_optimizers_sgd(.learning_rate = 0.1, .momentum = 0.9), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.1 * g[i], 1e-6);
    one_step(tfc_optimizers_sgd(.learning_rate = 0.1, .momentum = 0.9, .nesterov = true), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] + (-0.1 * g[i]) * 0.9 - 0.1 * g[i], 1e-6);
    /* Adam: m = 0.1 g, v = 0.001 g^2, alpha = lr sqrt(1 - 0.999) / (1 - 0.9) */
    one_step(tfc_optimizers_adam(), out);
    for (int i = 0; i < 2; i++) {
        double m = 0.1 * g[i], v = 0.001 * g[i] * g[i], a = 0.001 * sqrt(1 - 0.999) / (1 - 0.9);
        CHECK_NEAR(out[i], w0[i] - a * m / (sqrt(v) + 1e-7), 1e-6);
    }
    /* AdamW: w * (1 - lr * 0.004), then the Adam step */
    one_step(tfc_optimizers_adamw(), out);
    for (int i = 0; i < 2; i++) {
        double m = 0.1 * g[i], v = 0.001 * g[i] * g[i], a = 0.001 * sqrt(1 - 0.999) / (1 - 0.9);
        CHECK_NEAR(out[i], w0[i] * (1 - 0.001 * 0.004) - a * m / (sqrt(v) + 1e-7), 1e-6);
    }
    /* RMSprop without momentum: rms = 0.1 g^2; w -= lr g / (sqrt(rms) + eps) */
    one_step(tfc_optimizers_rmsprop(), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.001 * g[i] / (sqrt(0.1 * g[i] * g[i]) + 1e-7), 1e-6);
    /* rho = 0 is honoured with has_rho */
    one_step(tfc_optimizers_rmsprop(.rho = 0, .has_rho = true), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.001 * g[i] / (fabs(g[i]) + 1e-7), 1e-6);
    /* Adagrad: accum = 0.1 + g^2 */
    one_step(tfc_optimizers_adagrad(.learning_rate = 0.1), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.1 * g[i] / (sqrt(0.1 + g[i] * g[i]) + 1e-7), 1e-6);
    /* Adamax: m = 0.1 g, v = |g|; w -= lr / (1 - 0.9) * m / (v + eps) */
    one_step(tfc_optimizers_adamax(), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.001 / 0.1 * (0.1 * g[i]) / (fabs(g[i]) + 1e-7), 1e-6);
    /* Nadam (Keras 2.4): mu_t = 0.9 (1 - 0.5 * 0.96^(0.004 t)) */
    one_step(tfc_optimizers_nadam(), out);
    {
        double mu1 = 0.9 * (1 - 0.5 * pow(0.96, 0.004)), mu2 = 0.9 * (1 - 0.5 * pow(0.96, 0.008));
        double sched = mu1, sched_next = mu1 * mu2;
        for (int i = 0; i < 2; i++) {
            double gp = g[i] / (1 - sched), m = 0.1 * g[i], mp = m / (1 - sched_next);
            double v = 0.001 * g[i] * g[i], vp = v / (1 - 0.999);
            double mbar = (1 - mu1) * gp + mu2 * mp;
            CHECK_NEAR(out[i], w0[i] - 0.001 * mbar / (sqrt(vp) + 1e-7), 1e-6);
        }
    }
    /* decay: lr / (1 + decay * iterations) is lr at the first step */
    one_step(tfc_optimizers_sgd(.learning_rate = 0.1, .decay = 0.5), out);
    for (int i = 0; i < 2; i++) CHECK_NEAR(out[i], w0[i] - 0.1 * g[i], 1e-6);
}

/* Adam's scalar inputs are made once per step and dtype and shared by the variables: float32 and float64
 * variables updated together, in one order and the other, for three steps, end as each does alone. */
static tfc_tensor *typed(tfc_dtype dt, const double *v, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(dt, &n, 1, &st);
    REQUIRE(t);
    for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, tfc_tensor_mutable_data(t), i, v[i]);
    return t;
}

static void adam_mixed_run(bool amsgrad, const int *order, int n, double out[3][3]) {
    tfc_status st = TFC_STATUS_INIT;
    static const tfc_dtype dts[3] = {TFC_FLOAT, TFC_DOUBLE, TFC_FLOAT};
    tfc_optimizer *o = tfc_optimizers_adam(.learning_rate = 0.05, .amsgrad = amsgrad);
    REQUIRE(o);
    tfc_variable *v[3];
    for (int k = 0; k < n; k++) {
        int i = order[k];
        tfc_tensor *t = typed(dts[i], (double[]){1 + i, -2, 0.5 * i}, 3);
        char name[8];
        snprintf(name, sizeof name, "v%d:0", i);
        REQUIRE((v[k] = tfc_variable_new(ctx, t, true, name, &st)));
        tfc_tensor_unref(t);
    }
    for (int step = 0; step < 3; step++) {
        tfc_tensor *g[3];
        for (int k = 0; k < n; k++) {
            int i = order[k];
            g[k] = typed(dts[i], (double[]){0.1 * (step + 1) + i, -0.3 * i, step % 2 ? 0.7 : -0.2}, 3);
        }
        CHECK(tfc_optimizer_apply_gradients(o, ctx, g, v, n, &st));
        CHECK_OK(&st);
        for (int k = 0; k < n; k++) tfc_tensor_unref(g[k]);
    }
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < 3; j++) out[order[k]][j] = vv(v[k], j);
        tfc_variable_free(v[k]);
    }
    tfc_optimizer_free(o);
}

static void test_adam_shared_consts(void) {
    for (int ams = 0; ams < 2; ams++) {
        double together[3][3], reversed[3][3], alone[3][3];
        adam_mixed_run(ams, (const int[]){0, 1, 2}, 3, together);
        adam_mixed_run(ams, (const int[]){2, 1, 0}, 3, reversed);
        for (int i = 0; i < 3; i++) adam_mixed_run(ams, (const int[]){i}, 1, alone);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                CHECK(together[i][j] == alone[i][j]);
                CHECK(reversed[i][j] == alone[i][j]);
            }
        CHECK(together[0][0] != 1.0 && together[1][0] != 2.0); /* the steps moved them */
    }
}

/* ResourceApplyAdam runs with denormals flushed to zero, as TensorFlow's pool threads (FTZ/DAZ): a denormal m
 * with a zero gradient becomes 0 (not 0.9 m), a normal one is updated as usual; the caller's floating-point
 * mode is as before (a denormal product stays denormal). */
static void test_adam_flushes_denormals(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_variable *var = var_f32("w:0", (double[]){1, 2}, (int64_t[]){2}, 1);
    tfc_variable *m = var_f32("m:0", (double[]){3e-39, 1e-3}, (int64_t[]){2}, 1);
    tfc_variable *v = var_f32("v:0", (double[]){1e-6, 1e-6}, (int64_t[]){2}, 1);
    CHECK(vv(m, 0) > 0 && vv(m, 0) < 1.17549435e-38); /* stored denormal */
    tfc_tensor *g = f32((double[]){0, 0}, (int64_t[]){2}, 1);
    tfc_tensor *in[10] = {tfc_variable_handle(var), tfc_variable_handle(m), tfc_variable_handle(v),
                          tfc_scalar(TFC_FLOAT, 0.9, &st), tfc_scalar(TFC_FLOAT, 0.999, &st),
                          tfc_scalar(TFC_FLOAT, 0.001, &st), tfc_scalar(TFC_FLOAT, 0.9, &st),
                          tfc_scalar(TFC_FLOAT, 0.999, &st), tfc_scalar(TFC_FLOAT, 1e-7, &st), g};
    tfc_tensor *out[1];
    CHECK(tfc_execute(ctx, "ResourceApplyAdam", in, 10, NULL, 0, out, 0, &st) == 0);
    CHECK_OK(&st);
    CHECK(vv(m, 0) == 0.0);
    CHECK_NEAR(vv(m, 1), 0.9e-3, 1e-9);
    volatile float tiny = 3e-39f, half = 0.5f;
    CHECK(tiny * half > 0.0f); /* no FTZ left behind */
    for (int i = 3; i < 9; i++) tfc_tensor_unref(in[i]);
    tfc_tensor_unref(g);
    tfc_variable_free(var);
    tfc_variable_free(m);
    tfc_variable_free(v);
    tfc_scope_end(ctx);
}

static void test_schedules(void) {
    tfc_lr_schedule *e = tfc_schedules_exponential_decay(.initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5);
    CHECK_NEAR(tfc_lr_schedule_value(e, 0), 0.1, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(e, 10), 0.05, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(e, 5), 0.1 * pow(0.5, 0.5), 1e-7);
    tfc_lr_schedule_free(e);
    e = tfc_schedules_exponential_decay(.initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5,
                                        .staircase = true);
    CHECK_NEAR(tfc_lr_schedule_value(e, 19), 0.05, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(e, 20), 0.025, 1e-7);
    tfc_lr_schedule_free(e);
    tfc_lr_schedule *p = tfc_schedules_piecewise_constant_decay(.boundaries = (int64_t[]){100, 200}, .n_boundaries = 2,
                                                                .values = (double[]){1.0, 0.5, 0.1});
    CHECK_NEAR(tfc_lr_schedule_value(p, 0), 1.0, 0);
    CHECK_NEAR(tfc_lr_schedule_value(p, 100), 1.0, 0); /* x <= boundary keeps the earlier value */
    CHECK_NEAR(tfc_lr_schedule_value(p, 101), 0.5, 0);
    CHECK_NEAR(tfc_lr_schedule_value(p, 200), 0.5, 0);
    CHECK_NEAR(tfc_lr_schedule_value(p, 201), (float)0.1, 0);
    tfc_lr_schedule_free(p);
    tfc_lr_schedule *c = tfc_schedules_cosine_decay(.initial_learning_rate = 0.1, .decay_steps = 100, .alpha = 0.1);
    CHECK_NEAR(tfc_lr_schedule_value(c, 0), 0.1, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(c, 50), 0.1 * (0.9 * 0.5 + 0.1), 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(c, 100), 0.01, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(c, 1000), 0.01, 1e-7); /* clamped at decay_steps */
    tfc_lr_schedule_free(c);
    c = tfc_schedules_cosine_decay(.initial_learning_rate = 0.0, .decay_steps = 10, .warmup_target = 0.1,
                                   .has_warmup_target = true, .warmup_steps = 10);
    CHECK_NEAR(tfc_lr_schedule_value(c, 5), 0.05, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(c, 10), 0.1, 1e-7);
    CHECK_NEAR(tfc_lr_schedule_value(c, 15), 0.05, 1e-7);
    tfc_lr_schedule_free(c);
    /* an optimizer reads lr = schedule(iterations) */
    tfc_optimizer *o = tfc_optimizers_sgd(.learning_rate_schedule = tfc_schedules_exponential_decay(
                                              .initial_learning_rate = 0.1, .decay_steps = 1, .decay_rate = 0.5));
    CHECK_NEAR(tfc_optimizer_learning_rate(o), 0.1, 1e-7);
    double out[2];
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w = var_f32("w:0", (double[]){1, 1}, (int64_t[]){2}, 1);
    tfc_tensor *g = f32((double[]){1, 1}, (int64_t[]){2}, 1);
    for (int i = 0; i < 3; i++) CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK_NEAR(vv(w, 0), 1 - 0.1 - 0.05 - 0.025, 1e-6);
    CHECK_NEAR(tfc_optimizer_learning_rate(o), 0.0125, 1e-7);
    tfc_optimizer_set_learning_rate(o, 0.5); /* replaces the schedule */
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK_NEAR(vv(w, 0), 1 - 0.175 - 0.5, 1e-6);
    tfc_tensor_unref(g);
    tfc_variable_free(w);
    tfc_optimizer_free(o);
    /* a user function */
    (void)out;
}

static double half_lr(int64_t step, void *user) {
    (void)user;
    return 0.5 / (double)(step + 1);
}

static int calls[8], n_calls;
static bool aggregator(void *user, tfc_ctx *c, tfc_tensor **g, tfc_variable *const *v, int n, tfc_status *st) {
    (void)user, (void)v;
    calls[n_calls++] = 1;
    for (int i = 0; i < n; i++) { /* doubles the gradients */
        tfc_tensor *two = tfc_scalar_f32(2.0f, st);
        g[i] = tfc_emit(c, "Mul", (tfc_tensor *[]){g[i], two}, 2, NULL, 0, st);
        tfc_tensor_unref(two);
    }
    return true;
}
static bool add_one(void *user, tfc_ctx *c, tfc_tensor **g, tfc_variable *const *v, int n, tfc_status *st) {
    (void)user, (void)v;
    calls[n_calls++] = 2;
    for (int i = 0; i < n; i++) {
        tfc_tensor *one = tfc_scalar_f32(1.0f, st);
        g[i] = tfc_emit(c, "AddV2", (tfc_tensor *[]){g[i], one}, 2, NULL, 0, st);
        tfc_tensor_unref(one);
    }
    return true;
}
static bool drop_all(void *user, tfc_ctx *c, tfc_tensor **g, tfc_variable *const *v, int n, tfc_status *st) {
    (void)user, (void)c, (void)v, (void)st;
    calls[n_calls++] = 3;
    for (int i = 0; i < n; i++) g[i] = NULL;
    return true;
}

static void test_hooks_and_clipping(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w = var_f32("w:0", (double[]){0, 0}, (int64_t[]){2}, 1);
    tfc_tensor *g = f32((double[]){3, -4}, (int64_t[]){2}, 1);
    /* aggregate (x2), then the transformers in order (+1, then again +1): (2g + 1) + 1 */
    tfc_optimizer *o = tfc_optimizers_sgd(.learning_rate = 1, .gradient_aggregator = aggregator,
                                          .gradient_transformers = {add_one, add_one});
    n_calls = 0;
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK(n_calls == 3 && calls[0] == 1 && calls[1] == 2 && calls[2] == 2);
    CHECK_NEAR(vv(w, 0), -(2 * 3 + 2), 1e-6);
    CHECK_NEAR(vv(w, 1), -(2 * -4 + 2), 1e-6);
    tfc_optimizer_free(o);
    /* a transformer may drop a gradient: that variable is left alone, iterations still advance */
    o = tfc_optimizers_sgd(.learning_rate = 1, .gradient_transformers = {drop_all});
    double before = vv(w, 0);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK(vv(w, 0) == before && tfc_optimizer_iterations(o) == 1);
    tfc_optimizer_free(o);
    /* Keras rejects clipping together with transformers, and clipnorm with global_clipnorm */
    o = tfc_optimizers_sgd(.clipnorm = 1, .gradient_transformers = {add_one});
    CHECK(!tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "gradient_transformers"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_sgd(.clipnorm = 1, .global_clipnorm = 1);
    CHECK(!tfc_optimizer_apply_gradients(o, ctx, &g, &w, 1, &st));
    CHECK(strstr(st.msg, "Cannot accept both"));
    tfc_optimizer_free(o);
    /* clipnorm: g * 1 / max(|g|, 1) with |g| = 5 */
    tfc_variable *z = var_f32("z:0", (double[]){0, 0}, (int64_t[]){2}, 1);
    o = tfc_optimizers_sgd(.learning_rate = 1, .clipnorm = 1);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &z, 1, &st));
    CHECK_NEAR(vv(z, 0), -0.6, 1e-6);
    CHECK_NEAR(vv(z, 1), 0.8, 1e-6);
    tfc_optimizer_free(o);
    /* clipvalue */
    o = tfc_optimizers_sgd(.learning_rate = 1, .clipvalue = 0.5);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, &z, 1, &st));
    CHECK_NEAR(vv(z, 0), -1.1, 1e-6);
    CHECK_NEAR(vv(z, 1), 1.3, 1e-6);
    tfc_optimizer_free(o);
    /* global_clipnorm over two variables: norm 5 * sqrt(2), scale 1 / that */
    tfc_variable *vs[2] = {var_f32("p:0", (double[]){0, 0}, (int64_t[]){2}, 1),
                           var_f32("q:0", (double[]){0, 0}, (int64_t[]){2}, 1)};
    tfc_tensor *gs[2] = {g, g};
    o = tfc_optimizers_sgd(.learning_rate = 1, .global_clipnorm = 1);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, gs, vs, 2, &st));
    CHECK_NEAR(vv(vs[1], 0), -3 / (5 * sqrt(2.0)), 1e-6);
    tfc_optimizer_free(o);
    /* a function schedule */
    o = tfc_optimizers_sgd(.learning_rate_schedule = tfc_schedules_function(half_lr, NULL));
    double p0 = vv(vs[0], 0);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, vs, 1, &st));
    CHECK(tfc_optimizer_apply_gradients(o, ctx, &g, vs, 1, &st));
    CHECK_NEAR(vv(vs[0], 0), p0 - 3 * 0.5 - 3 * 0.25, 1e-6);
    char *cfg = tfc_optimizer_get_config(o, &st); /* a callable learning rate serialises as its value */
    CHECK(cfg && strstr(cfg, "\"learning_rate\":0.16666666666666666"));
    tfc_free(cfg);
    tfc_optimizer_free(o);
    tfc_variable_free(vs[0]);
    tfc_variable_free(vs[1]);
    tfc_variable_free(z);
    tfc_tensor_unref(g);
    tfc_variable_free(w);
}

static void test_minimize_and_slots(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w = var_f32("dense/kernel:0", (double[]){1, 2}, (int64_t[]){2}, 1);
    tfc_variable *b = var_f32("dense/bias:0", (double[]){0.5}, (int64_t[]){1}, 1);
    tfc_optimizer *o = tfc_optimizers_adam(.name = "opt", .amsgrad = true);
    tfc_variable *vars[2] = {w, b};
    for (int step = 0; step < 2; step++) {
        REQUIRE(tfc_scope_begin(ctx, &st));
        tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
        tfc_tensor *rw = tfc_variable_read(ctx, w, &st), *rb = tfc_variable_read(ctx, b, &st);
        /* loss = sum(w^2) + sum(b) */
        tfc_tensor *loss = tfc_reduce_sum(ctx, tfc_emit(ctx, "Square", &rw, 1, NULL, 0, &st), NULL, 0, false, &st);
        loss = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){loss, tfc_reduce_sum(ctx, rb, NULL, 0, false, &st)}, 2, NULL, 0, &st);
        REQUIRE(loss);
        CHECK(tfc_optimizer_minimize(o, ctx, loss, vars, 2, tape, &st));
        CHECK_OK(&st);
        tfc_scope_end(ctx);
    }
    /* Adam moves each coordinate by about lr per step against the gradient's sign */
    CHECK_NEAR(vv(w, 0), 1 - 0.002, 1e-4);
    CHECK_NEAR(vv(b, 0), 0.5 - 0.002, 1e-4);
    tfc_variable *out[16];
    int n = tfc_optimizer_variables(o, out, 16);
    CHECK(n == 7);
    const char *names[7] = {"opt/iter:0", "opt/dense/kernel/m:0", "opt/dense/bias/m:0", "opt/dense/kernel/v:0",
                            "opt/dense/bias/v:0", "opt/dense/kernel/vhat:0", "opt/dense/bias/vhat:0"};
    for (int i = 0; i < n && i < 7; i++) CHECK(!strcmp(tfc_variable_name(out[i]), names[i]));
    CHECK(tfc_optimizer_get_slot(o, w, "m") == out[1]);
    CHECK(tfc_optimizer_get_slot(o, b, "vhat") == out[6]);
    CHECK(tfc_optimizer_get_slot(o, w, "momentum") == NULL);
    /* NULL gradients are skipped; all NULL is an error */
    tfc_tensor *g1 = f32((double[]){1, 1}, (int64_t[]){2}, 1);
    tfc_tensor *gs[2] = {g1, NULL};
    double b0 = vv(b, 0);
    CHECK(tfc_optimizer_apply_gradients(o, ctx, gs, vars, 2, &st));
    CHECK(vv(b, 0) == b0);
    gs[0] = NULL;
    CHECK(!tfc_optimizer_apply_gradients(o, ctx, gs, vars, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "No gradients provided for any variable") && strstr(st.msg, "dense/bias:0"));
    /* wrong shape / dtype */
    gs[0] = g1;
    tfc_variable *vb[1] = {b};
    CHECK(!tfc_optimizer_apply_gradients(o, ctx, gs, vb, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "dense/bias:0") && strstr(st.msg, "[2]") && strstr(st.msg, "[1]"));
    tfc_tensor *gi = tfc_scalar_i32(1, &st);
    tfc_variable *vi = tfc_variable_new(ctx, gi, true, "count:0", &st);
    CHECK(!tfc_optimizer_apply_gradients(o, ctx, &gi, &vi, 1, &st));
    CHECK(strstr(st.msg, "Invalid type int32"));
    CHECK(tfc_optimizer_iterations(o) == 3);
    tfc_variable_free(vi);
    tfc_tensor_unref(gi);
    tfc_tensor_unref(g1);
    tfc_optimizer_free(o);
    tfc_variable_free(w);
    tfc_variable_free(b);
}

static bool config_is(tfc_optimizer *o, const char *want) {
    tfc_status st = TFC_STATUS_INIT;
    char *s = tfc_optimizer_get_config(o, &st);
    cJSON *a = cJSON_Parse(s), *b = cJSON_Parse(want);
    bool same = a && b && cJSON_Compare(a, b, true);
    if (!same) fprintf(stderr, "config %s\n expected %s\n", s, want);
    cJSON_Delete(a);
    cJSON_Delete(b);
    tfc_free(s);
    return same;
}

static void test_configs(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_optimizer *o = tfc_optimizers_adam();
    CHECK(config_is(o, "{\"name\": \"Adam\", \"learning_rate\": 0.001, \"decay\": 0.0, \"beta_1\": 0.9, \"beta_2\": "
                       "0.999, \"epsilon\": 1e-07, \"amsgrad\": false}"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_sgd(.momentum = 0.9, .nesterov = true, .clipnorm = 1.0);
    CHECK(config_is(o, "{\"name\": \"SGD\", \"clipnorm\": 1.0, \"learning_rate\": 0.01, \"decay\": 0.0, \"momentum\": "
                       "0.9, \"nesterov\": true}"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_rmsprop();
    CHECK(config_is(o, "{\"name\": \"RMSprop\", \"learning_rate\": 0.001, \"decay\": 0.0, \"rho\": 0.9, \"momentum\": "
                       "0.0, \"epsilon\": 1e-07, \"centered\": false}"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_adagrad();
    CHECK(config_is(o, "{\"name\": \"Adagrad\", \"learning_rate\": 0.001, \"decay\": 0.0, "
                       "\"initial_accumulator_value\": 0.1, \"epsilon\": 1e-07}"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_nadam();
    CHECK(config_is(o, "{\"name\": \"Nadam\", \"learning_rate\": 0.001, \"decay\": 0.004, \"beta_1\": 0.9, "
                       "\"beta_2\": 0.999, \"epsilon\": 1e-07}"));
    tfc_optimizer_free(o);
    o = tfc_optimizers_adamw();
    CHECK(config_is(o, "{\"name\": \"AdamW\", \"weight_decay\": 0.004, \"clipnorm\": null, \"global_clipnorm\": null, "
                       "\"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": 0.99, \"ema_overwrite_frequency\": "
                       "null, \"jit_compile\": false, \"is_legacy_optimizer\": false, \"learning_rate\": "
                       "0.0010000000474974513, \"beta_1\": 0.9, \"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}"));
    tfc_optimizer_free(o);
    /* names and defaults */
    const char *names[] = {"sgd", "adam", "adamw", "rmsprop", "adagrad", "adamax", "nadam", "Custom>Adam", "RMSprop"};
    const char *classes[] = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Nadam", "Adam", "RMSprop"};
    for (int i = 0; i < 9; i++) {
        o = tfc_optimizer_from_config(names[i], NULL, &st);
        CHECK_OK(&st);
        REQUIRE(o);
        CHECK(!strcmp(tfc_optimizer_class_name(o), classes[i]));
        CHECK_NEAR(tfc_optimizer_learning_rate(o), i == 0 ? 0.01 : 0.001, 1e-7);
        tfc_optimizer_free(o);
    }
    /* a bare config with a schedule and "lr" */
    o = tfc_optimizer_from_config("SGD", "{\"lr\": 0.5, \"momentum\": 0.5}", &st);
    REQUIRE(o);
    CHECK_NEAR(tfc_optimizer_learning_rate(o), 0.5, 0);
    tfc_optimizer_free(o);
    o = tfc_optimizer_from_config("Adam", "{\"learning_rate\": {\"class_name\": \"PiecewiseConstantDecay\", \"config\": "
                                          "{\"boundaries\": [1], \"values\": [0.1, 0.2]}}}",
                                  &st);
    REQUIRE(o);
    CHECK_NEAR(tfc_optimizer_learning_rate(o), (float)0.1, 0);
    tfc_optimizer_free(o);
    /* errors */
    CHECK(!tfc_optimizer_from_config("lbfgs", NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "lbfgs"));
    CHECK(!tfc_optimizer_from_config("SGD", "{\"momentum\": 1.5}", &st));
    CHECK(strstr(st.msg, "momentum"));
    CHECK(!tfc_optimizer_from_config("Adagrad", "{\"initial_accumulator_value\": -1}", &st));
    CHECK(!tfc_optimizer_from_config("Nadam", "{\"learning_rate\": {\"class_name\": \"ExponentialDecay\", \"config\": "
                                              "{\"initial_learning_rate\": 0.1, \"decay_steps\": 1, \"decay_rate\": 0.5}}}",
                                     &st));
    CHECK(strstr(st.msg, "Nadam"));
    CHECK(!tfc_optimizer_from_config("Adam", "{\"use_ema\": true, \"is_legacy_optimizer\": false}", &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(!tfc_optimizer_from_config("Adam", "{\"beta_1\": \"x\"}", &st));
    CHECK(strstr(st.msg, "beta_1"));
    CHECK(!tfc_optimizer_from_config("Adam", "[1", &st));
    CHECK(!tfc_optimizer_from_config("Adam", "{\"learning_rate\": {\"class_name\": \"Nope\", \"config\": {}}}", &st));
    CHECK(strstr(st.msg, "Nope"));
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_log_set_min_level(TFC_LOG_ERROR); /* the skipped-gradient warning */
    int64_t live = tfc_tensor_live_count();
    void (*tests[])(void) = {test_tf_keras_refs,      test_one_step,           test_adam_shared_consts,
                             test_adam_flushes_denormals, test_schedules,      test_hooks_and_clipping,
                             test_minimize_and_slots, test_configs};
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        int64_t before = tfc_tensor_live_count();
        tests[i]();
        if (tfc_tensor_live_count() != before)
            fprintf(stderr, "test %zu leaves %lld tensors\n", i, (long long)(tfc_tensor_live_count() - before));
    }
    CHECK(tfc_tensor_live_count() == live);
    if (tfc_tensor_live_count() != live)
        fprintf(stderr, "live tensors: %lld, expected %lld\n", (long long)tfc_tensor_live_count(), (long long)live);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
