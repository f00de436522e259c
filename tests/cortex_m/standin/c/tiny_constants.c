/* tiny_constants.c: stand-in constants for model "tiny" (read by make_data.py). */
#include "tiny.h"

extern const float tiny_weight[12];
extern const float tiny_bias[3];

const float tiny_weight[12] = {
    0.5f, -0.25f, 1.0f, 0.125f,
    -1.0f, 0.75f, -0.5f, 2.0f,
    0.25f, 0.25f, -2.0f, -0.375f,
};

const float tiny_bias[3] = {0.1f, -0.2f, 0.3f};
