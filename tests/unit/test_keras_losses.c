/* Keras losses: values and gradients with respect to y_pred against tf_keras for every loss (reductions,
 * sample weights of several shapes, label smoothing, from_logits, huge logits), configs read with
 * tfc_loss_from_config, hand-computed values, errors and ownership. */
#include <cjson/cJSON.h>

#include "core/tensor_internal.h"
#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* Generated with tf_keras 2.21: loss(y_true, y_pred, sample_weight) and d loss / d y_pred for each case */
static const struct loss_ref {
    const char *name, *config;
    struct { int rank; int64_t dims[3]; } yt_shape, yp_shape, sw_shape, out_shape;
    bool yt_int;
    double yt[24], yp[24], sw[24], out[24], grad[24];
} loss_refs[] = {
    {"mse",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_squared_error\", \"fn\": \"mean_squared_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {2.226156},
     {0.0397148393, 0.366770118, -0.091780901, -0.198220372, -0.0270797983, -0.139178932, 0.0824693665, -0.0900592059, -0.169502243, 0.433165789, -0.550295949, 0.0635156408}},
    {"mse_sum_sw",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredError\", \"config\": {\"reduction\": \"sum\", \"name\": \"mean_squared_error\", \"fn\": \"mean_squared_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {1, 0.5, 2, 0},
     {3.13805723},
     {0.158859357, 1.46708047, -0.367123604, -0.396440744, -0.0541595966, -0.278357863, 0.659754932, -0.720473647, -1.35601795, 0, -0, 0}},
    {"mse_none_sw1",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredError\", \"config\": {\"reduction\": \"none\", \"name\": \"mean_squared_error\", \"fn\": \"mean_squared_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {2, {4, 1}}, {1, {4}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {1, 0.5, 2, 0},
     {1.73425591, 0.356372446, 1.04742873, 0},
     {0.158859357, 1.46708047, -0.367123604, -0.396440744, -0.0541595966, -0.278357863, 0.659754932, -0.720473647, -1.35601795, 0, -0, 0}},
    {"mse_scalar_sw",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_squared_error\", \"fn\": \"mean_squared_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {0, {}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {0.25},
     {0.556538999},
     {0.00992870983, 0.0916925296, -0.0229452252, -0.0495550931, -0.00676994957, -0.0347947329, 0.0206173416, -0.0225148015, -0.0423755608, 0.108291447, -0.137573987, 0.0158789102}},
    {"mse_3d_sw",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_squared_error\", \"fn\": \"mean_squared_error\"}, \"registered_name\": null}",
     {3, {2, 2, 3}}, {3, {2, 2, 3}}, {1, {2}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {1, 3},
     {5.4549675},
     {0.0397148393, 0.366770118, -0.091780901, -0.198220372, -0.0270797983, -0.139178932, 0.247408092, -0.270177603, -0.508506715, 1.29949737, -1.65088773, 0.190546915}},
    {"mae",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanAbsoluteError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_absolute_error\", \"fn\": \"mean_absolute_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {1, 0.5, 2, 0},
     {0.682283521},
     {0.0833333358, 0.0833333358, -0.0833333358, -0.0416666679, -0.0416666679, -0.0416666679, 0.166666672, -0.166666672, -0.166666672, 0, -0, 0}},
    {"mape",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanAbsolutePercentageError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_absolute_percentage_error\", \"fn\": \"mean_absolute_percentage_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {293.54187},
     {13.3241873, 48.5771942, -16.4918728, -31.8849373, -34.3289986, -5.73430729, 15.0263767, -67.2689056, -30.3626575, 5.45902348, -5.04836416, 53.9949112}},
    {"msle",
     "{\"module\": \"keras.losses\", \"class_name\": \"MeanSquaredLogarithmicError\", \"config\": {\"reduction\": \"auto\", \"name\": \"mean_squared_logarithmic_error\", \"fn\": \"mean_squared_logarithmic_error\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0.725428998, 0.271548271, 0.605299413, 0.361356407, 0.342749089, 1.55324149, 0.654580355, 0.223880917, 0.374459922, 1.62652457, 1.75069976, 0.254335523},
     {0.587139964, 2.22907233, 0.245386034, 1.65067875, 0.605227888, 2.48831511, 1.24939656, 0.61647433, 0.94255352, 1.27247024, 1.85107565, 0.735429347},
     {},
     {0.161023587},
     {-0.00877281185, 0.0481025539, -0.0339740478, 0.0418970808, 0.0185380392, 0.014909545, 0.0227553267, 0.0286859553, 0.0296810735, -0.0106194271, 0.00209517358, 0.031178534}},
    {"huber",
     "{\"module\": \"keras.losses\", \"class_name\": \"Huber\", \"config\": {\"reduction\": \"auto\", \"name\": \"huber_loss\", \"delta\": 1.0, \"fn\": \"huber\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-1.25085795, -0.343096524, 1.01059878, -0.522712827, -0.48549816, -2.90648293, 1.10916066, 0.247761816, 0.548919857, -3.05304909, 3.30139947, 0.308671057},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {1.04529786},
     {0.0719765052, 0.0833333358, -0.0833333358, -0.0773304924, 0.00668919086, 0.0515139922, -0.00498034572, -0.0553530119, -0.0833333358, 0.0833333358, -0.0833333358, 0.0188965257}},
    {"huber_d",
     "{\"module\": \"keras.losses\", \"class_name\": \"Huber\", \"config\": {\"reduction\": \"sum\", \"name\": \"huber_loss\", \"delta\": 0.5, \"fn\": \"huber\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {1, 0.5, 2, 0},
     {0.947984815},
     {0.0794296786, 0.166666672, -0.166666672, -0.0833333358, -0.0270797983, -0.0833333358, 0.329877466, -0.333333343, -0.333333343, 0, -0, 0}},
    {"bce",
     "{\"module\": \"keras.losses\", \"class_name\": \"BinaryCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"binary_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"binary_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0},
     {0.634379864, 0.522906184, 0.414885968, 0.0014268806, 0.0922623426, 0.709394395, 0.524345577, 0.696160436, 0.955468297, 0.68291384, 0.0531286895, 0.308852673},
     {},
     {0.674141288},
     {0.2279232, 0.17466864, -0.200858355, 0.0834524035, 0.0918033123, -0.117471069, 0.175197214, -0.119704202, 1.87132192, -0.122026108, 0.0880091414, 0.12057244}},
    {"bce_ls",
     "{\"module\": \"keras.losses\", \"class_name\": \"BinaryCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"binary_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.2, \"axis\": -1, \"fn\": \"binary_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0},
     {0.634379864, 0.522906184, 0.414885968, 0.0014268806, 0.0922623426, 0.709394395, 0.524345577, 0.696160436, 0.955468297, 0.68291384, 0.0531286895, 0.308852673},
     {1, 0.5, 2, 0},
     {0.933438838},
     {0.191994712, 0.141265199, -0.166530296, -2.88236499, -0.00384953991, -0.0385241173, 0.283569336, -0.160614073, 3.35093594, 0, 0, 0}},
    {"bce_logits",
     "{\"module\": \"keras.losses\", \"class_name\": \"BinaryCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"binary_crossentropy\", \"from_logits\": true, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"binary_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0},
     {-4.30489063, 1.50487232, -0.284326345, 3.57925773, -1.10645545, -5.71910954, -0.29883191, 5.09861183, -1.15026939, -2.66957068, -3.58077574, -3.1500504},
     {},
     {1.3184185},
     {0.00111020647, 0.0681916699, -0.0475505441, 0.081071727, 0.0207110252, -0.0830606818, 0.0354869217, -0.000505680742, 0.0200366583, -0.0779339224, 0.00225827168, 0.00342410733}},
    {"bce_huge",
     "{\"module\": \"keras.losses\", \"class_name\": \"BinaryCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"binary_crossentropy\", \"from_logits\": true, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"binary_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0},
     {10000, -10000, 0.5, -30000, 20000, 10000, 0, 0, 0, 50, -60, 88},
     {},
     {2507.54614},
     {0.0833333358, 0, -0.0314617231, 0, 0.0833333358, 0, 0.0416666716, -0.0416666642, 0.0416666679, -1.60729163e-23, 7.29709241e-28, 0.0833333358}},
    {"bce_b1",
     "{\"module\": \"keras.losses\", \"class_name\": \"BinaryCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"binary_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"binary_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 1}}, {1, {4}}, {-1, {0}}, {0, {}}, false,
     {0, 0, 0, 1},
     {0.634379864, 0.0014268806, 0.524345577, 0.68291384},
     {},
     {0.53300941},
     {0.683769584, 0.250357211, 0.525591552, -0.366078317}},
    {"cce",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {},
     {2.19052434},
     {-6.58485174, 0.25, 0.25, 0.249999985, 0.249999985, -1.64938891, 0.249999985, -3.36982965, 0.249999985, 0.249999985, 0.249999985, -0.280957401}},
    {"cce_ls",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.1, \"axis\": -1, \"fn\": \"categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {1, 0.5, 2, 0},
     {2.30605006},
     {-6.12919521, 0.238053396, 0.218657076, 0.105956525, 0.118585601, -0.761381507, 0.474049479, -6.25701523, 0.442267418, 0, 0, 0}},
    {"cce_logits",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_crossentropy\", \"from_logits\": true, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {-4.30489063, 1.50487232, -0.284326345, 3.57925773, -1.10645545, -5.71910954, -0.29883191, 5.09861183, -1.15026939, -2.66957068, -3.58077574, -3.1500504},
     {},
     {4.11619139},
     {-0.249359429, 0.213658392, 0.0357010402, 0.247692063, 0.00228524464, -0.24997732, 0.0011247684, -0.00160482526, 0.0004800522, 0.12373016, 0.0497444049, -0.17347455}},
    {"cce_huge",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_crossentropy\", \"from_logits\": true, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {10000, -10000, 0.5, -30000, 20000, 10000, 0, 0, 0, 50, -60, 88},
     {},
     {2500.27466},
     {0, 0, 0, 0, 0.25, -0.25, 0.0833333358, -0.166666657, 0.0833333358, 7.84783222e-18, 0, 0}},
    {"cce_unnorm",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_crossentropy\", \"from_logits\": false, \"label_smoothing\": 0.0, \"axis\": -1, \"fn\": \"categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {0.109731719, 2.09264064, 0.797627628, 0.656392932, 1.94874322, 0.394863814, 1.92674541, 0.207192063, 0.866062522, 0.601094365, 0.986362934, 1.41254258},
     {},
     {2.19052434},
     {-2.19495058, 0.0833333358, 0.0833333358, 0.0833333284, 0.0833333284, -0.549796343, 0.0833333284, -1.12327647, 0.0833333284, 0.0833333358, 0.0833333358, -0.0936524794}},
    {"scce",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": false, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {1, {4}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, true,
     {0, 2, 1, 2},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {},
     {2.19052434},
     {-6.58485174, 0.25, 0.24999997, 0.25, 0.25, -1.64938891, 0.25, -3.36982965, 0.25, 0.249999985, 0.24999997, -0.280957431}},
    {"scce_col",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"none\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": false, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {4, 1}}, {2, {4, 3}}, {-1, {0}}, {1, {4}}, true,
     {0, 2, 1, 2},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {},
     {3.30832911, 2.02782655, 2.67272139, 0.753220975},
     {-26.339407, 1, 0.999999881, 1, 1, -6.59755564, 1, -13.4793186, 1, 0.99999994, 0.999999881, -1.12382972}},
    {"scce_float_labels",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": false, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {1, {4}}, {2, {4, 3}}, {1, {4}}, {0, {}}, false,
     {0, 2, 1, 2},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {1, 0.5, 2, 0},
     {2.41692114},
     {-6.58485174, 0.25, 0.24999997, 0.125, 0.125, -0.824694455, 0.5, -6.73965931, 0.5, 0, 0, -0}},
    {"scce_logits",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": true, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {1, {4}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, true,
     {0, 2, 1, 2},
     {-4.30489063, 1.50487232, -0.284326345, 3.57925773, -1.10645545, -5.71910954, -0.29883191, 5.09861183, -1.15026939, -2.66957068, -3.58077574, -3.1500504},
     {},
     {4.11619139},
     {-0.249359429, 0.213658392, 0.0357010402, 0.247692063, 0.00228524464, -0.24997732, 0.0011247684, -0.00160482526, 0.0004800522, 0.12373016, 0.0497444049, -0.17347455}},
    {"scce_huge",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": true, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {1, {4}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, true,
     {0, 2, 1, 2},
     {10000, -10000, 0.5, -30000, 20000, 10000, 0, 0, 0, 50, -60, 88},
     {},
     {2500.27466},
     {0, 0, 0, 0, 0.25, -0.25, 0.0833333358, -0.166666657, 0.0833333358, 7.84783222e-18, 0, 0}},
    {"scce_3d",
     "{\"module\": \"keras.losses\", \"class_name\": \"SparseCategoricalCrossentropy\", \"config\": {\"reduction\": \"auto\", \"name\": \"sparse_categorical_crossentropy\", \"from_logits\": true, \"ignore_class\": null, \"fn\": \"sparse_categorical_crossentropy\"}, \"registered_name\": null}",
     {2, {2, 2}}, {3, {2, 2, 3}}, {-1, {0}}, {0, {}}, true,
     {0, 2, 1, 2},
     {-4.30489063, 1.50487232, -0.284326345, 3.57925773, -1.10645545, -5.71910954, -0.29883191, 5.09861183, -1.15026939, -2.66957068, -3.58077574, -3.1500504},
     {},
     {4.11619139},
     {-0.249359429, 0.213658392, 0.0357010402, 0.247692063, 0.00228524464, -0.24997732, 0.0011247684, -0.00160482526, 0.0004800522, 0.12373016, 0.0497444049, -0.17347455}},
    {"kld",
     "{\"module\": \"keras.losses\", \"class_name\": \"KLDivergence\", \"config\": {\"reduction\": \"auto\", \"name\": \"kl_divergence\", \"fn\": \"kl_divergence\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0.200364798, 0.328787655, 0.470847547, 0.642248452, 0.0690640211, 0.288687497, 0.218797654, 0.649581075, 0.131621271, 0.0365772396, 0.697546899, 0.265875876},
     {0.0365772396, 0.697546899, 0.265875876, 0.218797654, 0.649581075, 0.131621271, 0.642248452, 0.0690640211, 0.288687497, 0.200364798, 0.328787655, 0.470847547},
     {},
     {0.638379574},
     {-1.36946368, -0.117837116, -0.442732424, -0.733838439, -0.0265802164, -0.54832983, -0.0851686075, -2.35137272, -0.113982484, -0.0456383042, -0.530393124, -0.141168773}},
    {"poisson",
     "{\"module\": \"keras.losses\", \"class_name\": \"Poisson\", \"config\": {\"reduction\": \"auto\", \"name\": \"poisson\", \"fn\": \"poisson\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0.725428998, 0.271548271, 0.605299413, 0.361356407, 0.342749089, 1.55324149, 0.654580355, 0.223880917, 0.374459922, 1.62652457, 1.75069976, 0.254335523},
     {0.587139964, 2.22907233, 0.245386034, 1.65067875, 0.605227888, 2.48831511, 1.24939656, 0.61647433, 0.94255352, 1.27247024, 1.85107565, 0.735429347},
     {},
     {1.05501711},
     {-0.0196274668, 0.0731815696, -0.122226857, 0.0650905222, 0.0361405015, 0.0313154906, 0.0396735705, 0.0530697219, 0.0502264723, -0.0231868029, 0.00451881438, 0.0545139462}},
    {"logcosh",
     "{\"module\": \"keras.losses\", \"class_name\": \"LogCosh\", \"config\": {\"reduction\": \"auto\", \"name\": \"log_cosh\", \"fn\": \"log_cosh\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {0.658403158},
     {0.0194899142, 0.0813144073, -0.0417527929, -0.0691973791, -0.01342199, -0.056932576, 0.0381692275, -0.0411047265, -0.0640539303, 0.082417123, -0.0831077173, 0.0303047523}},
    {"hinge",
     "{\"module\": \"keras.losses\", \"class_name\": \"Hinge\", \"config\": {\"reduction\": \"auto\", \"name\": \"hinge\", \"fn\": \"hinge\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {1.15242946},
     {0.0833333358, 0.0833333358, -0.0833333358, 0, 0.0833333358, -0.0833333358, 0.0833333358, -0.0833333358, 0.0833333358, -0, 0, 0.0833333358}},
    {"sq_hinge",
     "{\"module\": \"keras.losses\", \"class_name\": \"SquaredHinge\", \"config\": {\"reduction\": \"auto\", \"name\": \"squared_hinge\", \"fn\": \"squared_hinge\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-1, -1, 1, -1, -1, 1, -1, 1, -1, 1, -1, -1},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {2.53672719},
     {0.102143347, 0.504845381, -0.174231023, 0, 0.0991286859, -0.548052549, 0.341566086, -0.236079067, 0.0429077446, -0, 0, 0.255904913}},
    {"cat_hinge",
     "{\"module\": \"keras.losses\", \"class_name\": \"CategoricalHinge\", \"config\": {\"reduction\": \"auto\", \"name\": \"categorical_hinge\", \"fn\": \"categorical_hinge\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {2.67685986},
     {-0.25, 0.25, 0, 0, 0, -0.25, 0.25, -0.25, 0, 0.25, 0, -0.25}},
    {"cosine",
     "{\"module\": \"keras.losses\", \"class_name\": \"CosineSimilarity\", \"config\": {\"reduction\": \"auto\", \"name\": \"cosine_similarity\", \"axis\": -1, \"fn\": \"cosine_similarity\"}, \"registered_name\": null}",
     {2, {4, 3}}, {2, {4, 3}}, {-1, {0}}, {0, {}}, false,
     {-0.625428975, -0.171548262, 0.505299389, -0.261356413, -0.24274908, -1.45324147, 0.554580331, 0.123880908, 0.274459928, -1.52652454, 1.65069973, 0.154335529},
     {-0.387139946, 2.02907228, -0.0453860313, -1.45067871, -0.40522787, -2.28831506, 1.04939651, -0.416474313, -0.742553532, 1.07247019, -1.6510756, 0.535429358},
     {},
     {-0.0759988725},
     {0.0937660709, 0.0162313413, -0.0741644576, -0.0288906749, 0.00228149537, 0.0179112479, -0.107563064, -0.0581535324, -0.119394541, 0.0230476372, 0.00254380703, -0.0383204892}},
};

static tfc_tensor *make(tfc_dtype dt, const double *v, int rank, const int64_t *dims) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank, &st);
    REQUIRE(t);
    void *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) tfc_dtype_set_f64(dt, p, i, v[i]);
    return t;
}

static void test_refs(void) {
    for (size_t c = 0; c < sizeof loss_refs / sizeof *loss_refs; c++) {
        const struct loss_ref *r = &loss_refs[c];
        tfc_status st = TFC_STATUS_INIT;
        tfc_loss *l = tfc_loss_from_config(NULL, r->config, &st);
        CHECK_OK(&st);
        if (!l) {
            fprintf(stderr, "  (%s: %s)\n", r->name, st.msg);
            continue;
        }
        REQUIRE(tfc_scope_begin(ctx, &st));
        tfc_tensor *yt = make(r->yt_int ? TFC_INT32 : TFC_FLOAT, r->yt, r->yt_shape.rank, r->yt_shape.dims);
        tfc_tensor *yp = make(TFC_FLOAT, r->yp, r->yp_shape.rank, r->yp_shape.dims);
        tfc_tensor *sw = r->sw_shape.rank >= 0 ? make(TFC_FLOAT, r->sw, r->sw_shape.rank, r->sw_shape.dims) : NULL;
        tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
        tfc_tape_watch(tape, yp);
        tfc_tensor *v = tfc_loss_call(l, ctx, yt, yp, sw, &st);
        CHECK_OK(&st);
        if (!v) {
            fprintf(stderr, "  (%s: %s)\n", r->name, st.msg);
        } else {
            CHECK(tfc_tensor_rank(v) == r->out_shape.rank);
            for (int64_t i = 0; i < tfc_tensor_num_elements(v); i++) {
                CHECK_NEAR(tfc_tensor_get_f64(v, i), r->out[i], 2e-6);
                if (!(fabs(tfc_tensor_get_f64(v, i) - r->out[i]) <= 2e-6 * (1 + fabs(r->out[i]))))
                    fprintf(stderr, "  (%s: value %lld)\n", r->name, (long long)i);
            }
            tfc_tensor *g = NULL;
            CHECK(tfc_tape_gradient(tape, v, &yp, 1, NULL, 0, TFC_UNCONNECTED_ZERO, &g, &st));
            CHECK_OK(&st);
            for (int64_t i = 0; g && i < tfc_tensor_num_elements(g); i++) {
                CHECK(isfinite(tfc_tensor_get_f64(g, i)));
                CHECK_NEAR(tfc_tensor_get_f64(g, i), r->grad[i], 2e-5);
                if (!(fabs(tfc_tensor_get_f64(g, i) - r->grad[i]) <= 2e-5 * (1 + fabs(r->grad[i]))))
                    fprintf(stderr, "  (%s: grad %lld = %g, want %g)\n", r->name, (long long)i, tfc_tensor_get_f64(g, i),
                            r->grad[i]);
            }
        }
        /* get_config gives back Keras's */
        char *cfg = tfc_loss_get_config(l, &st);
        cJSON *ours = cJSON_Parse(cfg), *theirs = cJSON_Parse(r->config);
        REQUIRE(ours && theirs);
        bool same = cJSON_Compare(ours, cJSON_GetObjectItem(theirs, "config"), true);
        CHECK(same);
        if (!same) fprintf(stderr, "  (%s: config %s)\n", r->name, cfg);
        cJSON_Delete(ours);
        cJSON_Delete(theirs);
        tfc_free(cfg);
        tfc_tape_free(tape);
        tfc_tensor_unref(yt);
        tfc_tensor_unref(yp);
        tfc_tensor_unref(sw);
        tfc_scope_end(ctx);
        tfc_loss_free(l);
    }
}

/* Hand-computed: MSE of y_true [[0, 1], [1, 0]] and y_pred [[0.5, 0.5], [1, 1]]: per sample [0.25, 0.5]. */
static void test_hand(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *yt = make(TFC_FLOAT, (double[]){0, 1, 1, 0}, 2, (int64_t[]){2, 2});
    tfc_tensor *yp = make(TFC_FLOAT, (double[]){0.5, 0.5, 1, 1}, 2, (int64_t[]){2, 2});
    tfc_tensor *sw = make(TFC_FLOAT, (double[]){2, 0}, 1, (int64_t[]){2});
    tfc_loss *l = tfc_losses_mean_squared_error();
    CHECK(!strcmp(tfc_loss_name(l), "mean_squared_error"));
    tfc_tensor *v = tfc_loss_call(l, ctx, yt, yp, NULL, &st);
    REQUIRE(v);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 0.375, 1e-7);
    tfc_tensor_unref(v);
    v = tfc_loss_call(l, ctx, yt, yp, sw, &st); /* (0.5 + 0) / 2 elements */
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 0.25, 1e-7);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    l = tfc_losses_mean_squared_error(.reduction = "none");
    v = tfc_loss_call(l, ctx, yt, yp, sw, &st);
    REQUIRE(v && tfc_tensor_rank(v) == 1);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 0.5, 1e-7);
    CHECK_NEAR(tfc_tensor_get_f64(v, 1), 0.0, 0);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    l = tfc_losses_mean_squared_error(.reduction = "sum");
    v = tfc_loss_call(l, ctx, yt, yp, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 0.75, 1e-7);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    /* Huber delta 1: errors 0.5 -> 0.125; 2 -> 2 - 0.5 */
    tfc_tensor *a = make(TFC_FLOAT, (double[]){0, 0}, 1, (int64_t[]){2}), *b = make(TFC_FLOAT, (double[]){0.5, 2}, 1, (int64_t[]){2});
    l = tfc_losses_huber();
    CHECK(!strcmp(tfc_loss_name(l), "huber_loss"));
    v = tfc_loss_call(l, ctx, a, b, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), (0.125 + 1.5) / 2, 1e-7);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    /* sparse CE of probabilities: -log(p[label]) after normalising */
    tfc_tensor *lab = make(TFC_INT64, (double[]){1, 0}, 1, (int64_t[]){2});
    tfc_tensor *pr = make(TFC_FLOAT, (double[]){0.2, 0.8, 0.6, 0.4}, 2, (int64_t[]){2, 2});
    l = tfc_losses_sparse_categorical_crossentropy();
    v = tfc_loss_call(l, ctx, lab, pr, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), -(log(0.8) + log(0.6)) / 2, 1e-6);
    tfc_tensor_unref(v);
    /* float64 inputs stay float64 */
    tfc_tensor *pr64 = make(TFC_DOUBLE, (double[]){0.2, 0.8, 0.6, 0.4}, 2, (int64_t[]){2, 2});
    v = tfc_loss_call(l, ctx, lab, pr64, NULL, &st);
    REQUIRE(v);
    CHECK(tfc_tensor_dtype(v) == TFC_DOUBLE);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), -(log(0.8) + log(0.6)) / 2, 1e-12);
    tfc_tensor_unref(v);
    tfc_tensor_unref(pr64);
    tfc_loss_free(l);
    /* Keras's _keras_logits: a softmax output's cross-entropy comes from the logits (1000, not -log(1e-7)) */
    tfc_tensor *lg = make(TFC_FLOAT, (double[]){1000, 0, 0}, 2, (int64_t[]){1, 3});
    tfc_tensor *oh = make(TFC_FLOAT, (double[]){0, 1, 0}, 2, (int64_t[]){1, 3});
    tfc_tensor *sm = tfc_emit(ctx, "Softmax", &lg, 1, NULL, 0, &st);
    l = tfc_losses_categorical_crossentropy();
    v = tfc_loss_call(l, ctx, oh, sm, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), -log((float)1e-7), 1e-5);
    tfc_tensor_unref(v);
    v = tfc_loss_call_logits(l, ctx, oh, sm, lg, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 1000, 1e-6);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    l = tfc_losses_mean_squared_error(); /* other losses ignore the logits */
    v = tfc_loss_call_logits(l, ctx, oh, sm, lg, NULL, &st);
    CHECK_NEAR(tfc_tensor_get_f64(v, 0), 2.0 / 3, 1e-6);
    tfc_tensor_unref(v);
    tfc_loss_free(l);
    tfc_tensor_unref(sm);
    tfc_tensor_unref(oh);
    tfc_tensor_unref(lg);
    tfc_tensor_unref(lab);
    tfc_tensor_unref(pr);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_tensor_unref(yt);
    tfc_tensor_unref(yp);
    tfc_tensor_unref(sw);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_loss *l = tfc_losses_sparse_categorical_crossentropy(.from_logits = true);
    tfc_tensor *lab = make(TFC_INT32, (double[]){1, 5, 0}, 1, (int64_t[]){3});
    tfc_tensor *lg = make(TFC_FLOAT, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, (int64_t[]){3, 3});
    CHECK(!tfc_loss_call(l, ctx, lab, lg, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "sparse_categorical_crossentropy") && strstr(st.msg, "label value of 5") &&
          strstr(st.msg, "[0, 3)"));
    tfc_tensor *neg = make(TFC_INT32, (double[]){-1, 0, 0}, 1, (int64_t[]){3});
    CHECK(!tfc_loss_call(l, ctx, neg, lg, NULL, &st));
    CHECK(strstr(st.msg, "label value of -1"));
    tfc_tensor *few = make(TFC_INT32, (double[]){0, 1}, 1, (int64_t[]){2});
    CHECK(!tfc_loss_call(l, ctx, few, lg, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_loss_free(l);
    /* shapes */
    l = tfc_losses_mean_squared_error();
    tfc_tensor *x = make(TFC_FLOAT, (double[]){1, 2, 3, 4, 5, 6}, 2, (int64_t[]){3, 2});
    CHECK(!tfc_loss_call(l, ctx, x, lg, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "mean_squared_error"));
    /* per-element weights that do not squeeze onto the per-sample losses (Keras: "Can not squeeze dim[1]") */
    CHECK(!tfc_loss_call(l, ctx, lg, lg, lg, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "sample_weight") && strstr(st.msg, "(3, 3)"));
    tfc_tensor *w2 = make(TFC_FLOAT, (double[]){1, 2}, 1, (int64_t[]){2});
    CHECK(!tfc_loss_call(l, ctx, lg, lg, w2, &st));
    CHECK(strstr(st.msg, "sample_weight"));
    tfc_loss_free(l);
    l = tfc_losses_categorical_crossentropy();
    CHECK(!tfc_loss_call(l, ctx, x, lg, NULL, &st));
    CHECK(strstr(st.msg, "categorical_crossentropy") && strstr(st.msg, "(3, 2)") && strstr(st.msg, "(3, 3)"));
    tfc_loss_free(l);
    l = tfc_losses_mean_squared_error(.reduction = "mean");
    CHECK(!tfc_loss_call(l, ctx, lg, lg, NULL, &st));
    CHECK(strstr(st.msg, "Invalid Reduction Key"));
    tfc_loss_free(l);
    CHECK(!tfc_loss_from_config("squared_error", NULL, &st));
    CHECK(strstr(st.msg, "Unknown loss function: squared_error"));
    CHECK(!tfc_loss_from_config("SparseCategoricalCrossentropy", "{\"ignore_class\": 0}", &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(!tfc_loss_from_config("MeanSquaredError", "{\"reduction\": \"avg\"}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(w2);
    tfc_tensor_unref(x);
    tfc_tensor_unref(few);
    tfc_tensor_unref(neg);
    tfc_tensor_unref(lab);
    tfc_tensor_unref(lg);
}

static void test_names(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *names[][2] = {
        {"mse", "mean_squared_error"}, {"MSE", "mean_squared_error"}, {"mae", "mean_absolute_error"},
        {"mape", "mean_absolute_percentage_error"}, {"msle", "mean_squared_logarithmic_error"},
        {"huber", "huber_loss"}, {"huber_loss", "huber_loss"}, {"kld", "kl_divergence"},
        {"kullback_leibler_divergence", "kl_divergence"}, {"logcosh", "log_cosh"}, {"bce", "binary_crossentropy"},
        {"sparse_categorical_crossentropy", "sparse_categorical_crossentropy"}, {"Huber", "huber_loss"},
        {"KLDivergence", "kl_divergence"}, {"CategoricalHinge", "categorical_hinge"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        tfc_loss *l = tfc_loss_from_config(names[i][0], NULL, &st);
        CHECK_OK(&st);
        REQUIRE(l);
        CHECK(!strcmp(tfc_loss_name(l), names[i][1]));
        tfc_loss_free(l);
    }
    /* a bare config */
    tfc_loss *l = tfc_loss_from_config("BinaryCrossentropy", "{\"from_logits\": true, \"label_smoothing\": 0.1, "
                                                             "\"name\": \"bce_l\", \"reduction\": \"sum\"}",
                                       &st);
    REQUIRE(l);
    char *c = tfc_loss_get_config(l, &st);
    CHECK(c && !strcmp(c, "{\"reduction\":\"sum\",\"name\":\"bce_l\",\"from_logits\":true,\"label_smoothing\":0.1,"
                          "\"axis\":-1,\"fn\":\"binary_crossentropy\"}"));
    tfc_free(c);
    tfc_loss_free(l);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    int64_t live = tfc_tensor_live_count();
    test_refs();
    test_hand();
    test_errors();
    test_names();
    CHECK(tfc_tensor_live_count() == live);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
