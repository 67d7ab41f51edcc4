/* SPDX-License-Identifier: MIT */
/* Jobs as read from a trace, plus the run state the simulator keeps for each. */
#ifndef ECOSCHED_JOB_H
#define ECOSCHED_JOB_H

#include <stdint.h>
#include <stddef.h>

enum eco_job_state {
    ECO_JOB_PENDING = 0, /* not yet submitted (simulated time before submit_s) */
    ECO_JOB_QUEUED,
    ECO_JOB_RUNNING,
    ECO_JOB_DONE,
    ECO_JOB_REJECTED, /* can never fit the cluster */
};

#define ECO_NO_DEADLINE (-1.0)

enum eco_reject_reason {
    ECO_REJECT_NONE = 0,
    ECO_REJECT_SIZE,     /* more GPUs than the cluster has (of the type it may use) */
    ECO_REJECT_POWER,    /* even alone at minimum limits it would exceed the power budget */
    ECO_REJECT_GPU_TYPE, /* pinned to a GPU type the cluster has none of */
};

struct eco_job {
    /* As read from the trace. Strings are offsets into the owning jobset's string arena. */
    uint32_t id_off;
    uint32_t workload_off;   /* 0: none */
    uint32_t user_off;       /* 0: none */
    uint32_t line;           /* line of the trace file the job came from */
    uint32_t account_off;    /* 0: none (Slurm account, sacct traces) */
    uint32_t partition_off;  /* 0: none (Slurm partition) */
    uint32_t acct_state_off; /* 0: none (the state Slurm's accounting recorded: COMPLETED, ...) */
    double submit_s;
    double duration_s;      /* run time on the reference GPU at full power */
    double deadline_s;      /* absolute, or ECO_NO_DEADLINE */
    double limit_s;         /* the user's time limit (wall-clock s); 0: none given, INFINITY:
                             * unlimited (Slurm's UNLIMITED, Partition_Limit) */
    double gpu_mem_gb;      /* 0: not given */
    uint32_t gpus;          /* GPUs held (a fractional request holds one whole GPU) */
    uint16_t gpu_milli;     /* per-GPU share requested, 1..1000 (1000: whole GPUs) */
    int16_t gpu_type;       /* catalog index the job must run on, or -1 for any */
    uint16_t workload;      /* power-model workload index (set by the simulator) */
    uint8_t deadline_drawn; /* deadline_s was drawn by the simulator (--deadlines) */
    uint8_t reject_reason;  /* enum eco_reject_reason, when state is ECO_JOB_REJECTED */
    uint8_t uniform_gpus;   /* all its GPUs are of one node group: power_w / gpus each */

    /* Run state, written by the simulator engine only. */
    uint8_t state;
    uint32_t preemptions;
    uint32_t gen;       /* bumped when a pending completion event becomes stale */
    uint32_t alloc_off; /* current/last allocation in the engine's allocation pool */
    uint32_t alloc_n;
    double start_s;        /* first start, -1 before it */
    double end_s;          /* completion, -1 before it */
    double last_start_s;   /* start of the current run segment */
    double enqueue_s;      /* when the job last entered the queue */
    double wait_s;         /* total time spent queued */
    double remaining_s;    /* work left, in reference seconds */
    double attained_gpu_s; /* GPUs x seconds run so far (up to last_start_s when running) */
    double speed;          /* reference seconds of work done per second on its GPUs */
    double power_w;        /* GPU power of the job while it runs (all its GPUs), W */
    double limit_w;        /* power limit of its GPUs, W; 0: its node group's limit */
    double clock_mhz;      /* SM clock its GPUs are locked at, MHz; 0: not locked */
    double energy_j;       /* GPU energy used so far, J */
};

struct eco_jobset {
    struct eco_job *jobs;
    size_t n, cap;
    char *strings; /* string arena; offset 0 holds "" */
    size_t str_len, str_cap;
    /* Loader counters. */
    size_t skipped_rows;       /* bad rows skipped with --skip-bad-rows */
    size_t skipped_non_gpu;    /* rows that request no GPU (e.g. CPU-only pods) */
    size_t skipped_unfinished; /* rows that never ran (e.g. pending pods) */
    size_t fractional;         /* jobs with a fractional GPU request */
    size_t unknown_columns;    /* columns ignored by the reader */
    /* Calendar time of the trace's time 0 (Unix s), when the trace gives one (sacct's Submit
     * times); has_epoch is 0 otherwise. */
    int has_epoch;
    double epoch_s;
};

/* An empty set; free with eco_jobset_destroy. */
struct eco_jobset *eco_jobset_create(void);
void eco_jobset_destroy(struct eco_jobset *s);
/* Appends a zeroed job with default run state; returns it (valid until the next add), or NULL. */
struct eco_job *eco_jobset_add(struct eco_jobset *s);
/* Copies `len` bytes of `str` into the arena; returns its offset, or 0 on failure/empty. */
uint32_t eco_jobset_intern(struct eco_jobset *s, const char *str, size_t len);
/* The string at `off` (borrowed; valid until the set changes). */
static inline const char *eco_jobset_str(const struct eco_jobset *s, uint32_t off)
{
    return s->strings + off;
}

#endif
