/*
 * cc.c: `relayc run --cc CC` and `relayc check --cc CC`. The translation unit libtcc
 * would get is built by an external C compiler into a shared library and loaded with
 * dlopen; libtcc does not optimise, and gcc or clang run the kernels many times faster.
 *
 * CC is a command: its words, split at blanks (no quoting, as make's CC), then
 * "-shared -fPIC -o model.so model.c -lm"; "-O2" is added when no word starts with -O.
 * Everything happens in a private directory (mkdtemp under $TMPDIR or /tmp) that is
 * removed before cc_load returns, whatever happened: the library stays mapped after its
 * file is gone. The compiler runs with TMPDIR set to that directory, so its own
 * temporaries land there too, and in a process group of its own, so that a signal that
 * ends relayc meanwhile ends the whole compiler first. There is no shell in between.
 *
 * cc_target asks the same compiler, the same way, what it compiles for: its predefined
 * macros (CC -dM -E on an empty file), which -march options change.
 */
#include "../compiler/relayc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* What libtcc gets from jit.c's prelude, a real compiler gets from the headers. */
static const char prelude[] = "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n\n";

/* The signals that end relayc (cmd/main.c cleans up on them) and so must not leave the
 * directory behind. */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* Removes path and, when it is a directory, everything in it. Best effort: this runs
 * on the way out of errors too. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dp = opendir(path);
        if (dp) {
            struct dirent *e;
            while ((e = readdir(dp)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char *sub = xasprintf("%s/%s", path, e->d_name);
                remove_tree(sub);
                free(sub);
            }
            closedir(dp);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Copies s into out with every "dir/" removed: the compiler's and dlopen's messages
 * name files in a directory that no longer exists when they are shown. */
static void strip_dir(const char *s, const char *dir, char *out, size_t len)
{
    size_t dl = strlen(dir), at = 0;
    while (*s && at + 1 < len) {
        if (!strncmp(s, dir, dl) && s[dl] == '/') {
            s += dl + 1;
            continue;
        }
        out[at++] = *s++;
    }
    out[at] = 0;
}

/* The line of the compiler's output to show: the first that mentions an error (not
 * collect2's "ld returned 1", which follows the linker's own line), else the first
 * that is not blank; "" when there is none. */
static void first_error(const char *log, const char *dir, char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char *line = NULL, *pick = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[strspn(line, " \t")])
            continue;
        if (strstr(line, "error") && strncmp(line, "collect2", 8)) {
            free(pick);
            pick = xstrdup(line);
            break;
        }
        if (!pick)
            pick = xstrdup(line);
    }
    free(line);
    fclose(f);
    if (pick) {
        strip_dir(pick, dir, out, len);
        free(pick);
    }
}

/* True when name can be run: a path that is executable, or a name found in PATH as
 * posix_spawnp searches it. glibc's posix_spawnp reports a failed exec itself, but under
 * valgrind (and with older C libraries) the child only exits 127; asking first gives the
 * same message everywhere. On false, *why is an errno value. */
static bool executable(const char *name, int *why)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) {
            *why = errno;
            return false;
        }
        return true;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    *why = ENOENT;
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        int n = end ? (int)(end - p) : (int)strlen(p);
        char *full = n ? xasprintf("%.*s/%s", n, p, name) : xasprintf("./%s", name);
        bool ok = access(full, X_OK) == 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode);
        if (!ok && errno == EACCES)
            *why = EACCES;
        free(full);
        if (ok)
            return true;
        if (!end)
            return false;
        p = end + 1;
    }
}

static bool write_source(const char *path, const char *source, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    bool ok = f && (!source[0] || fputs(prelude, f) >= 0) && fputs(source, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    if (!ok)
        snprintf(err, errlen, "cannot write the generated code for --cc: %s", strerror(errno));
    return ok;
}

/* Runs the compiler on src and waits for it; true when it exited 0. With lib, it builds
 * the library lib; without, it prints its predefined macros (-dM -E) into log, where its
 * messages go too. waitset holds SIGCHLD and the fatal signals, all blocked; the compiler
 * starts with oldmask. When a fatal signal comes first, kills the compiler's process
 * group, waits for it and sets *sig, for the caller to raise once the directory is gone. */
static bool compile(const char *cc, const char *dir, const char *src, const char *lib,
                    const char *log, const sigset_t *waitset, const sigset_t *oldmask,
                    int *sig, char *err, size_t errlen)
{
    /* argv: the words of cc, -O2 unless given, then what a loadable library needs */
    char **argv = NULL;
    char *words = xstrdup(cc);
    bool has_opt = false;
    for (char *w = strtok(words, " \t"); w; w = strtok(NULL, " \t")) {
        if (arrlen(argv) > 0 && !strncmp(w, "-O", 2))
            has_opt = true;
        arrput(argv, w);
    }
    if (arrlen(argv) == 0) {
        snprintf(err, errlen, "--cc: expected a compiler command, got '%s'", cc);
        arrfree(argv);
        free(words);
        return false;
    }
    if (!has_opt)
        arrins(argv, 1, (char *)"-O2");
    const char *build[] = { "-shared", "-fPIC", "-o", lib, src, "-lm", NULL };
    const char *macros[] = { "-dM", "-E", src, NULL };
    for (const char *const *w = lib ? build : macros; *w; w++)
        arrput(argv, (char *)*w);
    arrput(argv, NULL);
    int why;
    if (!executable(argv[0], &why)) {
        snprintf(err, errlen, "--cc: cannot run '%s': %s", argv[0],
                 why == ENOENT && !strchr(argv[0], '/') ? "not found in PATH" : strerror(why));
        arrfree(argv);
        free(words);
        return false;
    }
    /* the environment, with TMPDIR pointing into the private directory */
    char **envp = NULL;
    char *tmpdir = xasprintf("TMPDIR=%s", dir);
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "TMPDIR=", 7))
            arrput(envp, *e);
    arrput(envp, tmpdir);
    arrput(envp, NULL);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, oldmask);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    bool ok = false;
    if (rc != 0) {
        snprintf(err, errlen, "--cc: cannot run '%s': %s", argv[0], strerror(rc));
        goto out;
    }
    int status = 0;
    for (;;) {
        int s = sigwaitinfo(waitset, NULL);
        if (s == SIGCHLD) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            if (w < 0 && errno != EINTR) {
                snprintf(err, errlen, "--cc: cannot wait for '%s': %s", argv[0], strerror(errno));
                goto out;
            }
        } else if (s > 0) {
            *sig = s;
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            snprintf(err, errlen, "--cc: interrupted by signal %d", s);
            goto out;
        }
        /* else EINTR (a stop and continue, say): wait again */
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        ok = true;
        goto out;
    }
    char line[400], how[64];
    first_error(log, dir, line, sizeof line);
    if (WIFEXITED(status))
        snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(how, sizeof how, "wait status %d", status);
    if (line[0])
        snprintf(err, errlen, "the generated code did not compile with '%s' (%s): %s", cc, how,
                 line);
    else
        snprintf(err, errlen, "the generated code did not compile with '%s' (%s, no message)", cc,
                 how);
out:
    arrfree(argv);
    arrfree(envp);
    free(words);
    free(tmpdir);
    return ok;
}

/* What the compiler's predefined macros (CC -dM -E output, in the file log) say it
 * compiles for. */
static Target target_of_macros(const char *log)
{
    bool avx512 = false, avx2 = false, fma = false;
    char line[256];
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f)) {
        avx512 = avx512 || !strcmp(line, "#define __AVX512F__ 1\n");
        avx2 = avx2 || !strcmp(line, "#define __AVX2__ 1\n");
        fma = fma || !strcmp(line, "#define __FMA__ 1\n");
    }
    if (f)
        fclose(f);
    return avx512 ? TARGET_X86_64_AVX512 : avx2 && fma ? TARGET_X86_64_AVX2 : TARGET_GENERIC;
}

/* cc_load (source) or cc_target (source NULL: *target from the macros of an empty file). */
static void *cc_session(const char *source, const char *cc, Target *target, char *err,
                        size_t errlen)
{
    err[0] = 0;
    /* The fatal signals wait (unless ignored: a blocked ignored signal would be kept
     * pending) until the directory is gone; compile() takes them while the compiler runs. */
    sigset_t block, oldmask;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    for (size_t k = 0; k < sizeof fatal_signals / sizeof fatal_signals[0]; k++) {
        struct sigaction sa;
        if (sigaction(fatal_signals[k], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            sigaddset(&block, fatal_signals[k]);
    }
    /* SIGCHLD ignored would reap the compiler before waitpid sees its status */
    struct sigaction chld, dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, &chld);
    sigprocmask(SIG_BLOCK, &block, &oldmask);

    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0])
        tmp = "/tmp";
    char *dir = xasprintf("%s/relayc-XXXXXX", tmp);
    void *dl = NULL;
    int sig = 0;
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "--cc: cannot create a temporary directory in %s: %s", tmp,
                 strerror(errno));
        free(dir);
        dir = NULL;
    }
    if (dir) {
        char *src = xasprintf("%s/model.c", dir);
        char *lib = xasprintf("%s/model.so", dir);
        char *log = xasprintf("%s/cc.log", dir);
        if (!source) {
            if (write_source(src, "", err, errlen) &&
                compile(cc, dir, src, NULL, log, &block, &oldmask, &sig, err, errlen))
                *target = target_of_macros(log);
        } else if (write_source(src, source, err, errlen) &&
                   compile(cc, dir, src, lib, log, &block, &oldmask, &sig, err, errlen)) {
            dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            if (!dl) {
                const char *why = dlerror();
                char msg[400];
                strip_dir(why ? why : "unknown error", dir, msg, sizeof msg);
                snprintf(err, errlen, "--cc: '%s' succeeded but its library does not load: %s",
                         cc, msg);
            }
        }
        remove_tree(dir);
        free(src);
        free(lib);
        free(log);
        free(dir);
    }
    sigaction(SIGCHLD, &chld, NULL);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    if (sig)
        raise(sig);         /* the handler it has (cmd/main.c's) runs now */
    return dl;
}

void *cc_load(const char *source, const char *cc, char *err, size_t errlen)
{
    return cc_session(source, cc, NULL, err, errlen);
}

Target cc_target(const char *cc)
{
    Target t = TARGET_GENERIC;
    char err[512];
    cc_session(NULL, cc, &t, err, sizeof err);
    return t;
}
