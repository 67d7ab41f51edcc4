/* SPDX-License-Identifier: MIT */
/* GET /v1/jobs off the event loop: one worker thread, at a lower CPU priority, with its own
 * read-only connection to the store, builds listing pages while the loop goes on serving
 * submits; the loop suspends each listing's connection and the worker resumes it with the
 * answer (libmicrohttpd's suspend/resume). See docs/daemon/README.md, "Threads". */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "daemon/store.h"
#include "lister.h"
#include "util/log.h"

/* The worker's nice value. On a loaded server (2 cores here, with the submitting clients and
 * eight listers all wanting CPU) a listing page costs ~1 ms of CPU and a submit ~0.14 ms;
 * at nice 0 the worker took a core's share of the time the loop needs for submits. At +10
 * the kernel gives it about a tenth of the weight of a nice-0 thread (CFS weights 110 vs
 * 1024), so a submit waking the loop preempts a listing, and listings use what is left. */
#define WORKER_NICE 10

struct ecod_lister {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, stopping;
    struct eco_store *store;  /* the worker's own, read-only */
    ecod_list_build_fn build; /* fills a listing's answer from store */
    char logs_dir[4096];      /* a copy: the worker reads nothing of struct ecod */
    int wake_fd;              /* eventfd: an answer is ready (MHD's own wake-up does not reach
                               * the loop's poll of its epoll fd: measured, a listing waited
                               * for the next 1 s tick) */
    size_t cap, head, n;      /* ring of pending listings */
    struct ecod_list_req **ring;
};

static void *worker(void *arg)
{
    struct ecod_lister *l = arg;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WORKER_NICE) < 0)
        ECO_LOG(ECO_LOG_WARN, "list", "cannot lower the listing thread's priority: %s",
                strerror(errno));
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (l->n == 0 && !l->stopping)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->n == 0)
            break; /* stopping, and every pending listing answered */
        struct ecod_list_req *r = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
        l->n--;
        pthread_mutex_unlock(&l->mu);
        l->build(l->store, l->logs_dir, r);
        /* r belongs to the connection again from here; MHD's resume takes its own lock,
         * which orders the answer's writes before the loop reads them */
        MHD_resume_connection(r->conn);
        uint64_t one = 1;
        if (write(l->wake_fd, &one, sizeof one) < 0) /* only EAGAIN: a wake-up is pending */
            (void)0;
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int ecod__lister_create(const char *db_path, const char *logs_dir, size_t queue_cap,
                        ecod_list_build_fn build, struct ecod_lister **out, struct eco_error *err)
{
    struct ecod_lister *l = NULL;
    sigset_t all, old;
    int ret = 0;
    *out = NULL;
    if (queue_cap && (l = calloc(1, sizeof *l)))
        l->wake_fd = -1; /* before anything can fail: destroy closes it when >= 0 */
    if (!l || !(l->ring = calloc(queue_cap, sizeof *l->ring))) {
        ret = eco_errorf(err, queue_cap ? -ENOMEM : -EINVAL, "listing worker: %s",
                         queue_cap ? "out of memory" : "no queue");
        goto out;
    }
    l->cap = queue_cap;
    l->build = build;
    snprintf(l->logs_dir, sizeof l->logs_dir, "%s", logs_dir);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    if ((l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        ret = eco_errorf(err, -errno, "listing worker: eventfd: %s", strerror(errno));
        goto out;
    }
    if ((ret = eco_store_open_reader(db_path, &l->store, err)) < 0)
        goto out;
    /* signals stay with the event loop (its handlers and wake pipe): the worker blocks all */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ret = -pthread_create(&l->thread, NULL, worker, l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ret < 0) {
        eco_errorf(err, ret, "listing worker: cannot start a thread: %s", strerror(-ret));
        goto out;
    }
    l->started = true;
out:
    if (ret < 0) {
        ecod__lister_destroy(l);
        return ret;
    }
    *out = l;
    return 0;
}

int ecod__lister_fd(const struct ecod_lister *l)
{
    return l ? l->wake_fd : -1;
}

void ecod__lister_woken(struct ecod_lister *l)
{
    uint64_t n;
    if (l && read(l->wake_fd, &n, sizeof n) < 0) /* EAGAIN: nothing was pending */
        (void)0;
}

int ecod__lister_submit(struct ecod_lister *l, struct ecod_list_req *r)
{
    int ret = 0;
    pthread_mutex_lock(&l->mu);
    if (l->n == l->cap || l->stopping) {
        ret = -EAGAIN;
        goto out;
    }
    /* suspended before the worker can see it, so its resume never comes first; the worker
     * calls resume without this lock, so the lock order is always ours, then MHD's */
    MHD_suspend_connection(r->conn);
    l->ring[(l->head + l->n) % l->cap] = r;
    l->n++;
    pthread_cond_signal(&l->cv);
out:
    pthread_mutex_unlock(&l->mu);
    return ret;
}

void ecod__lister_destroy(struct ecod_lister *l)
{
    if (!l)
        return;
    if (l->started) {
        pthread_mutex_lock(&l->mu);
        l->stopping = true;
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->thread, NULL);
    }
    if (l->ring) {
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
    }
    eco_store_close(l->store);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    free(l->ring);
    free(l);
}
