/*
 * osu_mpi.c: hypercube-bench's MPI peer. The same benchmarks as our `osu` node program
 * (crates/bench/src/bin/osu.rs), written against MPI and run on Open MPI, so that a row
 * of ours and a row of Open MPI's measure the same thing and print the same way.
 *
 * Method: the OSU Micro-Benchmarks (Network-Based Computing Laboratory, The Ohio State
 * University), as osu_latency, osu_bw and the osu_<collective> tests measure:
 *
 *   latency   ranks 0 and 1 ping-pong SIZE bytes; the figure is half the round trip (us).
 *             10000 iterations up to 8 KiB, 1000 above; warm-up 100 / 10.
 *   bw        rank 0 posts 64 non-blocking sends of SIZE bytes (the window), rank 1 64
 *             receives; after the window, a 4-byte ack from rank 1. MB/s = 10^6 bytes/s.
 *             100 iterations up to 8 KiB, 20 above; warm-up 10 / 2. Sizes from 1.
 *   <coll>    each rank times every call alone, with an untimed barrier after it; the
 *             figure is the per-rank mean of one call, averaged over the ranks
 *             ("Avg Latency(us)"). 1000 iterations up to 8 KiB, 100 above; warm-up
 *             100 / 10. barrier runs at size 0 only.
 *
 * Collectives: bcast reduce allreduce allgather reduce_scatter alltoall scatter gather
 * scan barrier shift (by one, with MPI_Sendrecv), rooted ones at rank 0. Reductions sum
 * MPI_FLOAT. SIZE is the per-rank message in bytes: per destination for alltoall and scatter, per source for gather and
 * allgather, the per-rank result for reduce_scatter (each rank contributes np blocks).
 *
 * -i ITERS replaces the iteration counts (sizes above 8 KiB use ITERS/10, at least 1);
 * -x WARMUP the warm-up. Sizes double from MIN to MAX (0 is followed by 1).
 *
 * Output, on rank 0 only and flushed per line: `# <title>`, then `# Size` left-aligned in
 * 10 columns with the value column's name right-aligned in 20, then one row per size
 * (`%-10zu%20.2f`). crates/bench/src/osu.rs prints and parses the same format.
 *
 * --per-rank (collectives): after each row, also print every rank's own mean time of one
 * call, `# per rank: T0 T1 ...` (us, two decimals, in rank order), as our `osu --per-rank`
 * prints its first such line: the average hides a root that finishes last. Then
 * `# loop: T`: rank 0's wall time per call and the barrier after it (us), as ours prints.
 *
 * usage: osu_mpi BENCH [-m MIN:MAX] [-i ITERS] [-x WARMUP] [--per-rank]
 * Built and launched by `hypercube-bench` (`hypercube-bench mpi NP tcp|shm BENCH ...`).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WINDOW = 64, LARGE = 8192, MAX_BYTES = 1 << 30 };

/* The run's parameters, from the command line. */
struct opts {
    const char *bench;
    size_t lo, hi; /* -m MIN:MAX */
    long iters;    /* -i; 0 = the defaults above */
    long warmup;   /* -x; -1 = the defaults above */
    int per_rank;  /* --per-rank: print each rank's mean, and rank 0's time per call and barrier ("# loop:"), after each row */
};

static int me, np;

static void say_title(const char *title, const char *column)
{
    if (me != 0)
        return;
    printf("# %s\n%-10s%20s\n", title, "# Size", column);
    fflush(stdout);
}

static void say_row(size_t size, double value)
{
    if (me != 0)
        return;
    printf("%-10zu%20.2f\n", size, value);
    fflush(stdout);
}

static void fail(const char *why)
{
    if (me == 0)
        fprintf(stderr, "osu_mpi: %s\n"
                        "usage: osu_mpi BENCH [-m MIN:MAX] [-i ITERS] [-x WARMUP] "
                        "[--per-rank]\n",
                why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static size_t next_size(size_t s) { return s == 0 ? 1 : s * 2; }

/* Iterations at SIZE: -i if given (a tenth above 8 KiB), else SMALL or LARGE_N. */
static long iterations(const struct opts *o, size_t size, long small, long large_n)
{
    if (o->iters > 0) {
        if (size <= LARGE)
            return o->iters;
        return o->iters / 10 > 0 ? o->iters / 10 : 1;
    }
    return size <= LARGE ? small : large_n;
}

static long warmups(const struct opts *o, size_t size, long small, long large_n)
{
    if (o->warmup >= 0)
        return o->warmup;
    return size <= LARGE ? small : large_n;
}

static void latency(const struct opts *o, char *out, char *in)
{
    say_title("OSU-style MPI Latency Test", "Latency (us)");
    for (size_t s = o->lo; s <= o->hi; s = next_size(s)) {
        long n = iterations(o, s, 10000, 1000), skip = warmups(o, s, 100, 10);
        double start = 0.0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < n + skip; i++) {
            if (i == skip)
                start = MPI_Wtime();
            if (me == 0) {
                MPI_Send(out, (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(in, (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (me == 1) {
                MPI_Recv(in, (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(out, (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        say_row(s, (MPI_Wtime() - start) * 1e6 / (2.0 * (double)n));
    }
}

static void bandwidth(const struct opts *o, char *out, char *in)
{
    MPI_Request window[WINDOW];
    say_title("OSU-style MPI Bandwidth Test", "Bandwidth (MB/s)");
    for (size_t s = o->lo > 0 ? o->lo : 1; s <= o->hi; s *= 2) {
        long n = iterations(o, s, 100, 20), skip = warmups(o, s, 10, 2);
        double start = 0.0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < n + skip; i++) {
            if (i == skip)
                start = MPI_Wtime();
            if (me == 0) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(out, (int)s, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &window[w]);
                MPI_Waitall(WINDOW, window, MPI_STATUSES_IGNORE);
                MPI_Recv(in, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (me == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(in, (int)s, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &window[w]);
                MPI_Waitall(WINDOW, window, MPI_STATUSES_IGNORE);
                MPI_Send(out, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
        }
        double seconds = MPI_Wtime() - start;
        say_row(s, (double)s * (double)n * WINDOW / seconds / 1e6);
    }
}

/* One call of a collective on COUNT floats (SIZE bytes) per rank. */
typedef int (*collective_fn)(float *out, float *in, int count, int *counts);

static int do_bcast(float *out, float *in, int count, int *counts)
{
    (void)in, (void)counts;
    return MPI_Bcast(out, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

static int do_reduce(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Reduce(out, in, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
}

static int do_allreduce(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Allreduce(out, in, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static int do_allgather(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Allgather(out, count, MPI_FLOAT, in, count, MPI_FLOAT, MPI_COMM_WORLD);
}

static int do_reduce_scatter(float *out, float *in, int count, int *counts)
{
    /* counts[r] = count for every r: np blocks in, one block of SIZE bytes out. */
    (void)count;
    return MPI_Reduce_scatter(out, in, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static int do_alltoall(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Alltoall(out, count, MPI_FLOAT, in, count, MPI_FLOAT, MPI_COMM_WORLD);
}

static int do_scatter(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Scatter(out, count, MPI_FLOAT, in, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

static int do_gather(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Gather(out, count, MPI_FLOAT, in, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

static int do_scan(float *out, float *in, int count, int *counts)
{
    (void)counts;
    return MPI_Scan(out, in, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static int do_shift(float *out, float *in, int count, int *counts)
{
    /* Circular shift by one (Grama 4.6): send to rank + 1, receive from rank - 1. */
    int rank, np;
    (void)counts;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    return MPI_Sendrecv(out, count, MPI_FLOAT, (rank + 1) % np, 7, in, count, MPI_FLOAT,
                        (rank + np - 1) % np, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int do_barrier(float *out, float *in, int count, int *counts)
{
    (void)out, (void)in, (void)count, (void)counts;
    return MPI_Barrier(MPI_COMM_WORLD);
}

static const struct {
    const char *name;
    collective_fn call;
} collectives[] = {
    {"bcast", do_bcast},         {"reduce", do_reduce},
    {"allreduce", do_allreduce}, {"allgather", do_allgather},
    {"reduce_scatter", do_reduce_scatter},
    {"alltoall", do_alltoall},   {"scatter", do_scatter},
    {"gather", do_gather},       {"scan", do_scan},
    {"barrier", do_barrier},     {"shift", do_shift},
};

static collective_fn find_collective(const char *name)
{
    for (size_t k = 0; k < sizeof collectives / sizeof collectives[0]; k++)
        if (strcmp(collectives[k].name, name) == 0)
            return collectives[k].call;
    return NULL;
}

static void collective(const struct opts *o, collective_fn call, float *out, float *in)
{
    char title[128];
    int *counts = malloc((size_t)np * sizeof *counts);
    double *means = malloc((size_t)np * sizeof *means);
    size_t lo = o->lo, hi = o->hi;
    if (counts == NULL || means == NULL)
        fail("out of memory");
    snprintf(title, sizeof title, "OSU-style MPI %s Latency Test (np=%d)", o->bench, np);
    say_title(title, "Avg Latency(us)");
    if (call == do_barrier)
        lo = hi = 0;
    for (size_t s = lo; s <= hi; s = next_size(s)) {
        long n = iterations(o, s, 1000, 100), skip = warmups(o, s, 100, 10);
        int count = (int)(s / sizeof(float));
        double busy = 0.0, mean, sum = 0.0, loop0 = 0.0, looped;
        for (int r = 0; r < np; r++)
            counts[r] = count;
        for (long i = 0; i < n + skip; i++) {
            double t = MPI_Wtime();
            if (i == skip)
                loop0 = t;
            if (call(out, in, count, counts) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 3);
            t = MPI_Wtime() - t;
            if (i >= skip)
                busy += t;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        looped = (MPI_Wtime() - loop0) * 1e6 / (double)n;
        mean = busy * 1e6 / (double)n;
        MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        say_row(s, sum / np);
        if (o->per_rank) {
            MPI_Gather(&mean, 1, MPI_DOUBLE, means, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (me == 0) {
                printf("# per rank:");
                for (int r = 0; r < np; r++)
                    printf(" %.2f", means[r]);
                printf("\n# loop: %.2f\n", looped);
                fflush(stdout);
            }
        }
    }
    free(means);
    free(counts);
}

static long parse_long(const char *flag, const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0') {
        char why[96];
        snprintf(why, sizeof why, "%s takes a number, not \"%s\"", flag, text);
        fail(why);
    }
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {NULL, 4, 1 << 20, 0, -1, 0};
    if (argc < 2 || argv[1][0] == '-')
        fail("no benchmark named");
    o.bench = argv[1];
    for (int k = 2; k < argc; k += 2) {
        if (strcmp(argv[k], "--per-rank") == 0) {
            o.per_rank = 1;
            k--; /* a flag: no value to skip */
            continue;
        }
        if (k + 1 >= argc)
            fail("an option lacks its value");
        if (strcmp(argv[k], "-m") == 0) {
            unsigned long long lo, hi;
            char tail;
            if (sscanf(argv[k + 1], "%llu:%llu%c", &lo, &hi, &tail) != 2 || lo > hi)
                fail("-m takes MIN:MAX with MIN <= MAX");
            if (hi > MAX_BYTES)
                fail("-m: MAX above 1 GiB");
            o.lo = (size_t)lo;
            o.hi = (size_t)hi;
        } else if (strcmp(argv[k], "-i") == 0) {
            o.iters = parse_long("-i", argv[k + 1]);
        } else if (strcmp(argv[k], "-x") == 0) {
            o.warmup = parse_long("-x", argv[k + 1]);
        } else {
            fail("unknown option (use -m, -i, -x or --per-rank)");
        }
    }
    return o;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    struct opts o = parse(argc, argv);
    int p2p = strcmp(o.bench, "latency") == 0 || strcmp(o.bench, "bw") == 0;
    collective_fn call = p2p ? NULL : find_collective(o.bench);
    if (!p2p && call == NULL)
        fail("unknown benchmark (latency bw bcast reduce allreduce allgather "
             "reduce_scatter alltoall scatter gather scan barrier shift)");
    if (p2p && np < 2)
        fail("latency and bw need at least 2 ranks");

    /* np blocks of the largest size each way (alltoall, scatter, gather, allgather,
     * reduce_scatter), at least one float. The send side holds the floats
     * (k mod 7) + rank, as osu's reductions do. */
    size_t block = o.hi < sizeof(float) ? sizeof(float) : o.hi;
    size_t bytes = block * (size_t)np, floats = bytes / sizeof(float);
    float *out = malloc(bytes), *in = calloc(bytes, 1);
    if (out == NULL || in == NULL)
        fail("out of memory");
    for (size_t k = 0; k < floats; k++)
        out[k] = (float)(k % 7) + (float)me;

    if (strcmp(o.bench, "latency") == 0)
        latency(&o, (char *)out, (char *)in);
    else if (p2p)
        bandwidth(&o, (char *)out, (char *)in);
    else
        collective(&o, call, out, in);

    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
