/* SPDX-License-Identifier: MIT */
/* ecoschedd's cluster listener (cluster_listen): every request carries a MUNGE credential,
 * decoded by one worker thread (a munged round trip per request, never on the event loop; the
 * loop suspends the connection and the worker resumes it, as the listing worker does), then
 * checked against who may read and who may change (docs/daemon/README.md, "Cluster listener
 * (MUNGE)"; "Threads"). */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cluster.h"
#include "config.h"

/* Largest TLS file read: a PEM certificate chain or key is a few KiB; 1 MiB refuses a wrong
 * file (a log, a device) early. */
#define TLS_FILE_MAX (1 << 20)

int ecod__cluster_policy_init(struct ecod_cluster_policy *p, const char *admin, const char *readers,
                              struct eco_error *err)
{
    *p = (struct ecod_cluster_policy){.has_admin = false};
    if (admin && *admin) {
        if (ecod__config_user(admin, &p->admin) < 0)
            return eco_errorf(err, -EINVAL, "cluster_admin_user: no such user '%s'", admin);
        p->has_admin = true;
    }
    if (readers && !strcmp(readers, "*")) {
        p->all_read = true;
        return 0;
    }
    for (const char *s = readers; s && *s;) {
        char one[64];
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof one || p->n_read == ECOD_CLUSTER_READERS)
            return eco_errorf(err, -EINVAL,
                              "cluster_read_users: '%.100s' is not * or a comma list of at most "
                              "%d user names or uids",
                              readers, ECOD_CLUSTER_READERS);
        memcpy(one, s, n);
        one[n] = '\0';
        if (ecod__config_user(one, &p->read[p->n_read]) < 0)
            return eco_errorf(err, -EINVAL, "cluster_read_users: no such user '%s'", one);
        p->n_read++;
        s += n + (s[n] == ',');
    }
    return 0;
}

int ecod__cluster_policy_check(const struct ecod_cluster_policy *p, uid_t uid, const char *method,
                               bool *admin, struct eco_error *err)
{
    bool reading = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    *admin = uid == 0 || (p->has_admin && uid == p->admin);
    if (*admin)
        return 0;
    if (!reading)
        return eco_errorf(err, -EPERM,
                          "uid %u may not %s on the cluster listener (only root and "
                          "cluster_admin_user may change this node)",
                          (unsigned)uid, method);
    bool reader = p->all_read;
    for (size_t i = 0; !reader && i < p->n_read; i++)
        reader = p->read[i] == uid;
    if (!reader)
        return eco_errorf(err, -EPERM,
                          "uid %u may not read on the cluster listener (root, "
                          "cluster_admin_user and cluster_read_users may)",
                          (unsigned)uid);
    return 0;
}

void ecod__cluster_req_fini(struct ecod_cluster_req *r)
{
    free(r->cred);
    r->cred = NULL;
}

struct ecod_cluster {
    struct ecod_cluster_policy policy;
    char *tls_cert, *tls_key; /* PEM texts, NULL: http */
    struct eco_munge *munge;  /* the worker's (the start-up check's before it runs) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, stopping, locks;
    int wake_fd;    /* eventfd: a connection was resumed (as lister.c's) */
    size_t head, n; /* ring of pending requests */
    struct ecod_cluster_req *ring[ECOD_CLUSTER_QUEUE];
};

static void decode(struct ecod_cluster *cl, struct ecod_cluster_req *r)
{
    struct eco_error err = {{0}};
    r->rc = eco_munge_verify(cl->munge, r->cred, r->method, r->path, r->body, r->len, &r->uid,
                             &r->gid, &err);
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
}

static void *worker(void *arg)
{
    struct ecod_cluster *cl = arg;
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        while (cl->n == 0 && !cl->stopping)
            pthread_cond_wait(&cl->cv, &cl->mu);
        if (cl->n == 0)
            break; /* stopping, every pending request answered */
        struct ecod_cluster_req *r = cl->ring[cl->head];
        cl->head = (cl->head + 1) % ECOD_CLUSTER_QUEUE;
        cl->n--;
        pthread_mutex_unlock(&cl->mu);
        decode(cl, r);
        /* r is the connection's again from here (MHD's resume orders the writes) */
        MHD_resume_connection(r->conn);
        uint64_t one = 1;
        if (write(cl->wake_fd, &one, sizeof one) < 0) /* EAGAIN: a wake-up is pending */
            (void)0;
        pthread_mutex_lock(&cl->mu);
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

/* The whole of a PEM file `path` (config key `key`) into *out (malloc'd, NUL-terminated). */
static int read_pem(const char *key, const char *path, char **out, struct eco_error *err)
{
    struct stat st;
    char *buf = NULL;
    int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return eco_errorf(err, -errno, "%s %s: %s", key, path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        st.st_size > TLS_FILE_MAX) {
        rc = eco_errorf(err, -EINVAL, "%s %s: not a PEM file (a regular file of 1..%d bytes)", key,
                        path, TLS_FILE_MAX);
        goto out;
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        rc = eco_errorf(err, -ENOMEM, "%s %s: out of memory", key, path);
        goto out;
    }
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    if (n != st.st_size) {
        rc = eco_errorf(err, -EIO, "%s %s: %s", key, path, n < 0 ? strerror(errno) : "short read");
        goto out;
    }
    buf[n] = '\0';
    if (!strstr(buf, "-----BEGIN ")) {
        rc = eco_errorf(err, -EINVAL, "%s %s: no PEM block (-----BEGIN ...) in it", key, path);
        goto out;
    }
    *out = buf;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return rc;
}

static int setup_tls(struct ecod_cluster *cl, const struct ecod_config *c, struct eco_error *err)
{
    int rc;
    if (!c->cluster_tls_cert[0] && !c->cluster_tls_key[0])
        return 0;
    if (!c->cluster_tls_cert[0] || !c->cluster_tls_key[0])
        return eco_errorf(err, -EINVAL, "%s: needs %s too",
                          c->cluster_tls_cert[0] ? "cluster_tls_cert" : "cluster_tls_key",
                          c->cluster_tls_cert[0] ? "cluster_tls_key" : "cluster_tls_cert");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return eco_errorf(err, -ENOTSUP,
                          "cluster_tls_cert: this libmicrohttpd was built without TLS "
                          "(install one with GnuTLS, or leave cluster_tls_* unset)");
    if ((rc = read_pem("cluster_tls_cert", c->cluster_tls_cert, &cl->tls_cert, err)) < 0)
        return rc;
    return read_pem("cluster_tls_key", c->cluster_tls_key, &cl->tls_key, err);
}

/* munged must answer now: a listener that could authenticate no one is a start-up error. */
static int check_munged(struct ecod_cluster *cl, const struct ecod_config *c, struct eco_error *err)
{
    struct eco_error why = {{0}};
    char hdr[ECO_MUNGE_AUTH_CRED_MAX + 64];
    if (!(cl->munge = eco_munge_create(c->munge_socket, &why)))
        return eco_errorf(err, eco_munge_available() ? -ENOMEM : -ENOTSUP, "cluster_listen %s: %s",
                          c->cluster_listen, why.msg);
    int rc = eco_munge_header(cl->munge, "GET", "/", NULL, 0, hdr, sizeof hdr, &why);
    if (rc < 0)
        return eco_errorf(err, rc,
                          "cluster_listen %s: %s (start munged, e.g. systemctl start munge, or "
                          "set munge_socket to its socket)",
                          c->cluster_listen, why.msg);
    return 0;
}

static int start_worker(struct ecod_cluster *cl, struct eco_error *err)
{
    sigset_t all, old;
    pthread_mutex_init(&cl->mu, NULL);
    pthread_cond_init(&cl->cv, NULL);
    cl->locks = true;
    if ((cl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return eco_errorf(err, -errno, "cluster listener: eventfd: %s", strerror(errno));
    /* signals stay with the event loop: the worker blocks all */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = -pthread_create(&cl->thread, NULL, worker, cl);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc < 0)
        return eco_errorf(err, rc, "cluster listener: cannot start a thread: %s", strerror(-rc));
    cl->started = true;
    return 0;
}

int ecod__cluster_create(const struct ecod_config *c, struct ecod_cluster **out,
                         struct eco_error *err)
{
    struct ecod_cluster *cl = calloc(1, sizeof *cl);
    int rc;
    *out = NULL;
    if (!cl)
        return eco_errorf(err, -ENOMEM, "cluster listener: out of memory");
    cl->wake_fd = -1;
    if ((rc = ecod__cluster_policy_init(&cl->policy, c->cluster_admin_user, c->cluster_read_users,
                                        err)) < 0 ||
        (rc = check_munged(cl, c, err)) < 0 || (rc = setup_tls(cl, c, err)) < 0 ||
        (rc = start_worker(cl, err)) < 0) {
        ecod__cluster_destroy(cl);
        return rc;
    }
    *out = cl;
    return 0;
}

const struct ecod_cluster_policy *ecod__cluster_policy(const struct ecod_cluster *cl)
{
    return &cl->policy;
}

const char *ecod__cluster_tls_cert(const struct ecod_cluster *cl)
{
    return cl->tls_cert;
}

const char *ecod__cluster_tls_key(const struct ecod_cluster *cl)
{
    return cl->tls_key;
}

int ecod__cluster_fd(const struct ecod_cluster *cl)
{
    return cl ? cl->wake_fd : -1;
}

void ecod__cluster_woken(struct ecod_cluster *cl)
{
    uint64_t n;
    if (cl && read(cl->wake_fd, &n, sizeof n) < 0) /* EAGAIN: nothing was pending */
        (void)0;
}

int ecod__cluster_submit(struct ecod_cluster *cl, struct ecod_cluster_req *r)
{
    int rc = 0;
    pthread_mutex_lock(&cl->mu);
    if (cl->n == ECOD_CLUSTER_QUEUE || cl->stopping) {
        rc = -EAGAIN;
        goto out;
    }
    /* suspended before the worker can see it, so that its resume never comes first */
    MHD_suspend_connection(r->conn);
    cl->ring[(cl->head + cl->n) % ECOD_CLUSTER_QUEUE] = r;
    cl->n++;
    pthread_cond_signal(&cl->cv);
out:
    pthread_mutex_unlock(&cl->mu);
    return rc;
}

void ecod__cluster_destroy(struct ecod_cluster *cl)
{
    if (!cl)
        return;
    if (cl->started) {
        pthread_mutex_lock(&cl->mu);
        cl->stopping = true;
        pthread_cond_signal(&cl->cv);
        pthread_mutex_unlock(&cl->mu);
        pthread_join(cl->thread, NULL);
    }
    if (cl->locks) {
        pthread_mutex_destroy(&cl->mu);
        pthread_cond_destroy(&cl->cv);
    }
    if (cl->wake_fd >= 0)
        close(cl->wake_fd);
    eco_munge_destroy(cl->munge);
    free(cl->tls_cert);
    free(cl->tls_key);
    free(cl);
}
