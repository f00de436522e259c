/* pair_constants.c: stand-in constants for model "pair" (read by make_data.py). */
#include "pair.h"

extern const float pair_scale[3];

const float pair_scale[3] = {0.5f, -1.5f, 2.0f};
