/* m2m_mpi: one many-to-many exchange through MPI_Alltoallv, timed — the MPI twin of the
 * hypercube runtime's `m2m` (crates/bench/src/bin/m2m.rs), for `hypercube-bench routing`.
 *
 *   mpirun -np P m2m_mpi SIZES.txt -i ITERS -x WARMUP
 *
 * The matrix file: P lines of P byte counts (line = sender). Every iteration is a barrier,
 * then one timed MPI_Alltoallv whose blocks are checked (first and last bytes name sender
 * and receiver). Rank 0 prints `m2m slowest_us=... mean_us=... alg=mpi`.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what) {
    fprintf(stderr, "m2m_mpi: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 2) fail("usage: m2m_mpi SIZES.txt [-i ITERS] [-x WARMUP]");
    int iters = 5, warmup = 1;
    for (int a = 2; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "-i")) iters = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-x")) warmup = atoi(argv[a + 1]);
        else fail("unknown option (use -i ITERS, -x WARMUP)");
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) fail("cannot open the matrix file");
    long long *m = malloc(sizeof(long long) * (size_t)p * (size_t)p);
    for (long i = 0; i < (long)p * p; i++)
        if (fscanf(f, "%lld", &m[i]) != 1) fail("the matrix has fewer than p*p numbers");
    fclose(f);
    int *scount = malloc(sizeof(int) * p), *sdisp = malloc(sizeof(int) * p);
    int *rcount = malloc(sizeof(int) * p), *rdisp = malloc(sizeof(int) * p);
    long stot = 0, rtot = 0;
    for (int j = 0; j < p; j++) {
        scount[j] = (int)m[(long)me * p + j];
        sdisp[j] = (int)stot;
        stot += scount[j];
        rcount[j] = (int)m[(long)j * p + me];
        rdisp[j] = (int)rtot;
        rtot += rcount[j];
    }
    unsigned char *sbuf = malloc(stot + 1), *rbuf = malloc(rtot + 1);
    for (int j = 0; j < p; j++) {
        if (scount[j] == 0) continue;
        memset(sbuf + sdisp[j], (me * 31 + j) & 0xff, scount[j]);
        sbuf[sdisp[j]] = (unsigned char)me;
        sbuf[sdisp[j] + scount[j] - 1] = (unsigned char)j;
    }
    double total = 0;
    for (int i = 0; i < warmup + iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Alltoallv(sbuf, scount, sdisp, MPI_BYTE, rbuf, rcount, rdisp, MPI_BYTE,
                      MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0;
        for (int j = 0; j < p; j++) {
            if (rcount[j] == 0) continue;
            if (rbuf[rdisp[j]] != (unsigned char)j ||
                rbuf[rdisp[j] + rcount[j] - 1] != (unsigned char)me)
                fail("a received block is wrong");
        }
        if (i >= warmup) total += dt;
    }
    double mean_us = total / (iters > 0 ? iters : 1) * 1e6, slowest, sum;
    MPI_Reduce(&mean_us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) printf("m2m slowest_us=%.1f mean_us=%.1f alg=mpi\n", slowest, sum / p);
    MPI_Finalize();
    return 0;
}
