/*
 * replay_main.c: a main() for the fuzz targets when they are built without libFuzzer
 * (gcc, the ASan build, valgrind): runs LLVMFuzzerTestOneInput once on every file named
 * on the command line, and on every file in every directory named there. The meson test
 * fuzz_replay uses it to replay tests/fuzz/corpus/ and tests/fuzz/regressions/.
 * Prints TAP; a crash is a crash (the sanitizers report it).
 */
#define _DEFAULT_SOURCE
#include "relayc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n_run;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path)
{
    uint8_t *data;
    size_t len;
    char err[512];
    if (!read_file(path, &data, &len, err, sizeof err)) {
        printf("not ok %d - %s: %s\n", ++n_run, path, err);
        return 1;
    }
    /* an exact-size copy, so ASan sees reads past the end of the input */
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, data, len);
    free(data);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    printf("ok %d - %s\n", ++n_run, path);
    fflush(stdout);
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("not ok %d - %s: missing\n", ++n_run, path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d) {
        printf("not ok %d - %s: cannot open\n", ++n_run, path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xasprintf("%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= run_path(argv[i]);
    printf("1..%d\n", n_run);
    return bad;
}
