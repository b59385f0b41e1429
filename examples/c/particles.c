/* Particles whose cost drifts, rebalanced every few steps with hetlb's C interface, with a
 * check after every rebalance that every particle id survives exactly once.
 *
 * Each particle costs more as it moves right, so the ranks' work drifts apart; every
 * EVERY steps the ranks rebalance with measured speeds (each rank reports the work it did
 * and the time it took) and the particles' costs as their loads.
 *
 * Build and run (after installing hetlb, see docs/c-api.md):
 *   mpicc examples/c/particles.c $(pkg-config --cflags --libs hetlb) -o particles
 *   mpiexec -n 4 ./particles
 *   mpiexec -n 4 ./particles trace.json   # also a trace: trace.rankR.json on every rank, for
 *                                          # hetlb trace merge (docs/observe.md)
 */
#include <hetlb.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define STEPS 12
#define EVERY 3

typedef struct {
    double x, v;   /* position in [0, 1), velocity */
    uint64_t id;   /* at byte 16: hetlb_rebalance's id_offset */
    double cost;   /* work units of one step */
    double pad[4]; /* the rest of a 64-byte particle */
} particle;

static uint64_t load_of(const void *item, void *ctx) {
    (void)ctx;
    double c = ((const particle *)item)->cost;
    return c < 1.0 ? 1 : (uint64_t)c;
}

static void die(int rank, const char *what, int rc) {
    fprintf(stderr, "rank %d: %s failed (%d): %s\n", rank, what, rc, hetlb_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Every id of 0..total-1 held by exactly one rank: gathered and checked on rank 0. */
static void check_ids(const particle *p, size_t n, uint64_t total, int rank, int size) {
    int mine = (int)n, *counts = NULL, *displs = NULL, bad = 0;
    uint64_t *ids = malloc(sizeof(uint64_t) * (n ? n : 1)), *all = NULL;
    for (size_t i = 0; i < n; i++) ids[i] = p[i].id;
    if (rank == 0) {
        counts = malloc(sizeof(int) * (size_t)size);
        displs = malloc(sizeof(int) * (size_t)size);
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int sum = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = sum;
            sum += counts[r];
        }
        all = malloc(sizeof(uint64_t) * (size_t)(sum ? sum : 1));
        bad = (uint64_t)sum != total;
    }
    MPI_Gatherv(ids, mine, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0 && !bad) {
        unsigned char *seen = calloc(total, 1);
        for (uint64_t k = 0; k < total; k++) {
            if (all[k] >= total || seen[all[k]]) bad = 1;
            else seen[all[k]] = 1;
        }
        free(seen);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) {
        if (rank == 0) fprintf(stderr, "particles: an id was lost or doubled\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(ids);
    free(all);
    free(counts);
    free(displs);
}

int main(int argc, char **argv) {
    int rank, size, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* dem-hetero (it weighs the measured speeds) on a hypercube when the rank count is a
     * power of two, diffusion on a ring otherwise. */
    const char *rule = (size & (size - 1)) == 0 ? "dem-hetero" : "diffusion";
    char options[4096];
    const char *trace = argc > 1 ? argv[1] : NULL;
    int n = trace ? snprintf(options, sizeof options, "speeds=measured;timeout=30;trace=%s", trace)
                  : snprintf(options, sizeof options, "speeds=measured;timeout=30");
    if (n < 0 || (size_t)n >= sizeof options) {
        fprintf(stderr, "rank %d: the trace path is too long\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    hetlb_balancer *b = NULL;
    if ((rc = hetlb_balancer_create(MPI_COMM_WORLD, rule, options, &b)))
        die(rank, "hetlb_balancer_create", rc);

    /* Rank r starts with 2000 * (r + 1) particles. */
    uint64_t total = 1000u * (uint64_t)size * (uint64_t)(size + 1);
    uint64_t first = 1000u * (uint64_t)rank * (uint64_t)(rank + 1);
    size_t count = 2000u * (size_t)(rank + 1);
    particle *p = malloc(count * sizeof(particle));
    for (size_t i = 0; i < count; i++) {
        p[i] = (particle){.x = (double)(first + i) / (double)total, .v = 0.013, .id = first + i,
                          .cost = 1.0};
    }

    for (int step = 1; step <= STEPS; step++) {
        double t0 = MPI_Wtime(), work = 0.0, sink = 0.0;
        for (size_t i = 0; i < count; i++) {
            p[i].x += p[i].v;
            if (p[i].x >= 1.0) p[i].x -= 1.0;
            p[i].cost = 1.0 + 4.0 * p[i].x; /* the drift: particles on the right cost more */
            for (int k = 0; k < (int)p[i].cost * 20; k++) sink += p[i].x * k;
            work += p[i].cost;
        }
        p[0].pad[0] = count ? sink : 0.0; /* keep the work */
        double secs = MPI_Wtime() - t0;
        if ((rc = hetlb_record(b, (uint64_t)work, secs > 0 ? secs : 1e-9)))
            die(rank, "hetlb_record", rc);
        if (step % EVERY == 0) {
            hetlb_report report;
            void *items = p;
            rc = hetlb_rebalance(b, &items, &count, sizeof(particle), offsetof(particle, id),
                                 load_of, NULL, &report);
            p = items; /* possibly realloc'ed, on success and on failure alike */
            if (rc) die(rank, "hetlb_rebalance", rc);
            check_ids(p, count, total, rank, size);
            if (rank == 0)
                printf("step %2d: imbalance %.3f -> %.3f, rank 0 sent %llu particles\n", step,
                       report.imbalance_before, report.imbalance_after,
                       (unsigned long long)report.items_sent);
        }
    }
    free(p);
    hetlb_balancer_free(b);
    if (rank == 0) printf("particles (C): every particle held exactly once\n");
    MPI_Finalize();
    return 0;
}
