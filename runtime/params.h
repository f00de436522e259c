/*
 * params.h: the kernels' parameter structs, expanded from params.def. kernels.c and
 * kernels_int8.c include it when they are compiled into relayc; the C that relayc emits
 * carries the same typedefs, written from params.def by the emitter.
 */
#ifndef RELAYC_PARAMS_H
#define RELAYC_PARAMS_H

#define RC_PARAMS_RANK 8

#define PARAMS(T) typedef struct T {
#define FIELD(T, type, name) type name;
#define ARRAY(T, type, name) type name[RC_PARAMS_RANK];
#define END(T) } T;
#include "params.def"
#undef PARAMS
#undef FIELD
#undef ARRAY
#undef END

#endif
