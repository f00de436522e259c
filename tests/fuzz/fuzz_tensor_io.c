/*
 * fuzz_tensor_io.c: libFuzzer target over the decoders of untrusted binary data in
 * tensor_io.c: save_param_dict files (params_decode), NDArray blobs (blob_decode),
 * .npy files (npy_decode, then npy_encode and decode again: the round trip must give
 * the same tensor) and base64 (base64_decode, as b64ndarrays strings are read).
 * Every decoder sees the whole input; none may crash, leak or read out of bounds, and
 * each failure must come with a one-line reason.
 */
#include "relayc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(const char *err)
{
    if (!err[0] || strchr(err, '\n') || strchr(err, '\r'))
        abort();
}

static void check_tensor(const Tensor *t)
{
    if (t->shape.rank < 0 || t->shape.rank > RC_MAX_RANK)
        abort();
    int64_t n = shape_numel(&t->shape);
    if (n > RC_MAX_ELEMENTS || (size_t)n * dtype_size(t->dtype) != t->nbytes)
        abort();
    if (t->nbytes && !t->data)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];

    /* params file */
    NamedTensor *v = NULL;
    int count = 0;
    err[0] = 0;
    if (params_decode(data, size, &v, &count, err, sizeof err)) {
        for (int i = 0; i < count; i++) {
            check_tensor(&v[i].t);
            if (!v[i].name || strlen(v[i].name) > RC_MAX_NAME)
                abort();
        }
        params_free(v, count);
    } else {
        check_err(err);
    }

    /* one NDArray blob */
    Tensor t;
    size_t used = 0;
    err[0] = 0;
    if (blob_decode(data, size, &t, &used, err, sizeof err)) {
        check_tensor(&t);
        if (used > size)
            abort();
        tensor_free(&t);
    } else {
        check_err(err);
    }

    /* .npy, and its round trip through npy_encode */
    err[0] = 0;
    if (npy_decode(data, size, &t, err, sizeof err)) {
        check_tensor(&t);
        uint8_t *enc;
        size_t enclen;
        npy_encode(&t, &enc, &enclen);
        Tensor u;
        char err2[512];
        if (!npy_decode(enc, enclen, &u, err2, sizeof err2))
            abort();
        if (u.dtype != t.dtype || !shape_eq(&u.shape, &t.shape) || u.nbytes != t.nbytes ||
            (t.nbytes && memcmp(u.data, t.data, t.nbytes) != 0))
            abort();
        tensor_free(&u);
        free(enc);
        tensor_free(&t);
    } else {
        check_err(err);
    }

    /* base64, as a b64ndarrays string; a valid one decodes to a blob */
    uint8_t *raw;
    size_t rawlen;
    if (base64_decode((const char *)data, size, &raw, &rawlen)) {
        if (rawlen > size)
            abort();
        err[0] = 0;
        if (blob_decode(raw, rawlen, &t, &used, err, sizeof err))
            tensor_free(&t);
        else
            check_err(err);
        free(raw);
    }
    return 0;
}
