/* Every function of hetlb.h and every error path: NULL pointers, unknown rule, bad options
 * strings, zero-size items, id_offset out of range, mismatched ranks, failing callbacks; the
 * two-step form with ranks that send or receive nothing; every function with extreme counts
 * and sizes (never HETLB_ERR_INTERNAL). Run under MPI with any number of ranks (CI: mpiexec
 * -n 4 and -n 3, on MPICH and on Open MPI); exits non-zero on a failure. */
#include "hetlb.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static int rank = 0, size = 1;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, \
                    #cond);                                                                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, " (last error: %s)\n", hetlb_last_error());                   \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define EXPECT(call, code) CHECK((call) == (code), "expected %s", #code)

/* A record of 64 bytes: the id at byte 8, a cost, and a check word derived from the id. */
typedef struct {
    double x;
    uint64_t id;
    uint64_t cost;
    uint64_t check;
    double pad[4];
} record;

static uint64_t cost_of(const void *item, void *ctx) {
    (void)ctx;
    return ((const record *)item)->cost;
}

static record *make_records(size_t n, uint64_t first) {
    record *r = n ? malloc(n * sizeof(record)) : NULL;
    for (size_t i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof(record));
        r[i].id = first + i;
        r[i].cost = 1 + (first + i) % 5;
        r[i].check = ~(first + i);
        r[i].x = (double)(first + i);
    }
    return r;
}

/* Every id in [0, total) held by exactly one rank, every record intact. */
static void check_exactly_once(const record *r, size_t n, uint64_t total, const char *what) {
    int mine = (int)n;
    int *counts = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int *displs = malloc(sizeof(int) * (size_t)size);
    int all = 0;
    for (int k = 0; k < size; k++) {
        displs[k] = all;
        all += counts[k];
    }
    uint64_t *ids = malloc(sizeof(uint64_t) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        ids[i] = r[i].id;
        CHECK(r[i].check == ~r[i].id && r[i].x == (double)r[i].id, "%s: record %llu torn", what,
              (unsigned long long)r[i].id);
    }
    uint64_t *every = malloc(sizeof(uint64_t) * (size_t)(all ? all : 1));
    MPI_Allgatherv(ids, mine, MPI_UINT64_T, every, counts, displs, MPI_UINT64_T, MPI_COMM_WORLD);
    CHECK((uint64_t)all == total, "%s: %d records in all, %llu expected", what, all,
          (unsigned long long)total);
    unsigned char *seen = calloc(total ? total : 1, 1);
    for (int k = 0; k < all; k++) {
        CHECK(every[k] < total && !seen[every[k]], "%s: id %llu duplicated or unknown", what,
              (unsigned long long)every[k]);
        if (every[k] < total) seen[every[k]] = 1;
    }
    free(seen);
    free(every);
    free(ids);
    free(displs);
    free(counts);
}

static void test_no_mpi_functions(void) {
    CHECK(strlen(hetlb_version()) > 0, "version");
    uint64_t loads[8] = {5, 0, 3, 9, 2, 2, 8, 1}, out[8];
    double caps[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    EXPECT(hetlb_balance("cwa", NULL, 8, loads, NULL, out), HETLB_OK);
    uint64_t sum = 0;
    for (int i = 0; i < 8; i++) sum += out[i];
    CHECK(sum == 30, "balance conserves the total");
    CHECK(strcmp(hetlb_last_error(), "") == 0, "success clears the last error");
    EXPECT(hetlb_balance("dem-hetero", NULL, 8, loads, caps, out), HETLB_OK);
    EXPECT(hetlb_balance("diffusion", "ring:8", 8, loads, NULL, out), HETLB_OK);
    EXPECT(hetlb_balance(NULL, NULL, 8, loads, NULL, out), HETLB_ERR_NULL);
    CHECK(strstr(hetlb_last_error(), "algorithm") != NULL, "the message names the argument");
    EXPECT(hetlb_balance("cwa", NULL, 8, NULL, NULL, out), HETLB_ERR_NULL);
    EXPECT(hetlb_balance("cwa", NULL, 8, loads, NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_balance("no-such-rule", NULL, 8, loads, NULL, out), HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "no-such-rule") != NULL, "unknown rule named");
    EXPECT(hetlb_balance("cwa", "ring:x", 8, loads, NULL, out), HETLB_ERR_INVALID);
    EXPECT(hetlb_balance("dem", "ring:8", 8, loads, NULL, out), HETLB_ERR_INVALID);
    /* any count: the hypercube rules run embedded in a cube; diffusion needs a topology */
    EXPECT(hetlb_balance("cwa", NULL, 6, loads, NULL, out), HETLB_OK);
    EXPECT(hetlb_balance("oem", NULL, 6, loads, NULL, out), HETLB_OK);
    EXPECT(hetlb_balance("dishet", NULL, 6, loads, NULL, out), HETLB_ERR_INVALID);
    EXPECT(hetlb_balance("cwa", NULL, 0, loads, NULL, out), HETLB_ERR_INVALID);
    EXPECT(hetlb_balance("auto", NULL, 8, loads, NULL, out), HETLB_ERR_INVALID);

    /* hetlb_advise: all load on one of 8 nodes pays to move; a balanced vector does not. */
    uint64_t lopsided[8] = {900, 0, 0, 0, 0, 0, 0, 0}, level[4] = {5, 5, 5, 5};
    double speed = 100.0;
    int64_t choice = -2;
    char *json = NULL;
    EXPECT(hetlb_advise("cwa,dishet", 8, lopsided, &speed, 1, "seconds_per_message=1e-3",
                        &choice, &json),
           HETLB_OK);
    CHECK(choice >= 0 && choice < 4, "a candidate is chosen (2 rules x 2 routings)");
    CHECK(json != NULL && strstr(json, "\"candidates\"") != NULL, "the JSON document");
    hetlb_free(json);
    EXPECT(hetlb_advise(NULL, 4, level, &speed, 1, NULL, &choice, NULL), HETLB_OK);
    CHECK(choice == -1, "nothing pays on a balanced vector");
    EXPECT(hetlb_advise("cwa", 8, lopsided, &speed, 1, "routing=sideways", &choice, NULL),
           HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "routing") != NULL, "the option is named");
    EXPECT(hetlb_advise("cwa", 8, lopsided, NULL, 1, NULL, &choice, NULL), HETLB_ERR_NULL);
    void *p = hetlb_alloc(100);
    CHECK(p != NULL, "alloc");
    hetlb_free(p);
    hetlb_free(NULL);
    CHECK(hetlb_alloc(0) == NULL, "alloc of 0 bytes");
}

static void test_create(hetlb_balancer **b) {
    hetlb_balancer *x = (hetlb_balancer *)1;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, NULL, NULL, &x), HETLB_ERR_NULL);
    CHECK(x == NULL, "*out is NULL after an error");
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem-superb", NULL, &x), HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "dem-superb") != NULL, "unknown rule named");
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", "timeout", &x), HETLB_ERR_INVALID);
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", "colour=blue", &x), HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "colour") != NULL, "unknown key named");
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", "timeout=-2", &x), HETLB_ERR_INVALID);
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", "speeds=fast", &x), HETLB_ERR_INVALID);
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dem", "topology=ring:x", &x), HETLB_ERR_INVALID);
    EXPECT(hetlb_balancer_create(MPI_COMM_NULL, "dem", NULL, &x), HETLB_ERR_INVALID);
    /* A topology of the wrong size is refused by every rank alike. */
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "diffusion", "topology=ring:3", &x),
           size == 3 ? HETLB_OK : HETLB_ERR_INVALID);
    if (x) hetlb_balancer_free(x);
    hetlb_balancer_free(NULL);
    const char *rule = (size & (size - 1)) == 0 ? "dem" : "diffusion";
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, rule, "speeds=measured:3; timeout=20;", b),
           HETLB_OK);
    CHECK(*b != NULL, "a balancer");
    CHECK(hetlb_balancer_rank(*b) == rank, "rank");
    CHECK(hetlb_balancer_rank(NULL) == HETLB_ERR_NULL, "rank of NULL");
    EXPECT(hetlb_record(NULL, 10, 1.0), HETLB_ERR_NULL);
    EXPECT(hetlb_record(*b, 10, -1.0), HETLB_ERR_INVALID);
    EXPECT(hetlb_record(*b, 10, 0.0 / 0.0), HETLB_ERR_INVALID);
    EXPECT(hetlb_record(*b, 1000, 1.0), HETLB_OK); /* equal measured speeds */
}

static void test_advise(hetlb_balancer *b) {
    /* Rank 0 holds 5000 unit items, the others none; every speed is measured equal. */
    size_t n = rank == 0 ? 5000 : 0;
    int64_t choice = -2;
    char *json = NULL;
    EXPECT(hetlb_balancer_advise(NULL, n, NULL, &choice, &json), HETLB_ERR_NULL);
    CHECK(choice == -2 && json == NULL, "nothing written after an error");
    EXPECT(hetlb_balancer_advise(b, n, NULL, &choice, &json), HETLB_OK);
    CHECK(choice == (size > 1 ? 0 : -1), "the rule would move: choice %lld",
          (long long)choice);
    CHECK(json != NULL && strstr(json, "\"candidates\"") != NULL
              && strstr(json, "\"gain_per_iteration\"") != NULL,
          "the advice as JSON");
    long long mine = (long long)choice, lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "every rank gets the same choice");
    free(json);
    /* Without the outputs it still answers. */
    EXPECT(hetlb_balancer_advise(b, n, NULL, NULL, NULL), HETLB_OK);
}

static void test_rebalance(hetlb_balancer *b) {
    const size_t n0 = 5000;
    size_t count = rank == 0 ? n0 : 0;
    void *items = make_records(count, 0);
    hetlb_report report;
    memset(&report, 0, sizeof report);
    /* Argument errors: nothing changes. */
    EXPECT(hetlb_rebalance(NULL, &items, &count, sizeof(record), 8, NULL, NULL, NULL),
           HETLB_ERR_NULL);
    EXPECT(hetlb_rebalance(b, NULL, &count, sizeof(record), 8, NULL, NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_rebalance(b, &items, NULL, sizeof(record), 8, NULL, NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_rebalance(b, &items, &count, 0, 0, NULL, NULL, NULL), HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "item_size") != NULL, "zero size named");
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 57, NULL, NULL, NULL),
           HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "id_offset") != NULL, "id_offset named");
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), SIZE_MAX, NULL, NULL, NULL),
           HETLB_ERR_INVALID);
    void *none = NULL;
    size_t three = 3;
    EXPECT(hetlb_rebalance(b, &none, &three, sizeof(record), 8, NULL, NULL, NULL),
           HETLB_ERR_NULL);
    EXPECT(hetlb_rebalance(b, &items, &count, SIZE_MAX / 2, 8, NULL, NULL, NULL),
           HETLB_ERR_INVALID); /* records too large for a message, or sizes that overflow */
    CHECK(count == (rank == 0 ? n0 : 0), "argument errors leave the records alone");
    check_exactly_once(items, count, n0, "after argument errors");

    /* Mismatched ranks: rank 0 says the records are 72 bytes (8 more than they are,
     * counting one record fewer), the others 64: every rank refuses before anything moves. */
    if (size > 1) {
        size_t c = rank == 0 ? (count * sizeof(record)) / 72 : count;
        size_t before = c;
        void *rec = items;
        if (rank == 0) {
            /* A copy trimmed to a whole number of 72-byte records. */
            rec = malloc(c * 72);
            memcpy(rec, items, c * 72);
        }
        int rc = hetlb_rebalance(b, &rec, &c, rank == 0 ? 72 : sizeof(record), 8, NULL, NULL,
                                 NULL);
        EXPECT(rc, HETLB_ERR_MISMATCH);
        CHECK(strstr(hetlb_last_error(), "holds the") != NULL, "the message says what is held");
        CHECK(c == before, "a refused call keeps every record");
        if (rank == 0) free(rec);
        else items = rec;
    }

    /* Unit records. */
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, &report), HETLB_OK);
    check_exactly_once(items, count, n0, "unit records");
    if (size > 1 && (size & (size - 1)) == 0) {
        CHECK(count == n0 / (size_t)size, "an even share: %zu", count);
        CHECK(report.imbalance_before > report.imbalance_after, "the imbalance falls");
    }
    CHECK(report.seconds > 0.0, "the report's time");
    CHECK(report.checked == 1 && report.held_back == 0, "checked, not held back");
    {
        size_t nl = 0;
        const uint64_t *loads_after = NULL;
        EXPECT(hetlb_balancer_loads(b, &nl, &loads_after), HETLB_OK);
        uint64_t sum_after = 0;
        for (size_t k = 0; k < nl; k++) sum_after += loads_after[k];
        CHECK(nl == (size_t)size && sum_after == n0, "every rank's load after: %zu, %llu", nl,
              (unsigned long long)sum_after);
        CHECK(nl == 0 || loads_after[rank] == count, "this rank's load is its count");
        EXPECT(hetlb_balancer_loads(b, NULL, &loads_after), HETLB_ERR_NULL);
    }
    uint64_t sent = report.items_sent, got = report.items_received, total_sent = 0, total_got = 0;
    MPI_Allreduce(&sent, &total_sent, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&got, &total_got, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_sent == total_got && (size == 1 || total_sent > 0), "sent = received");

    /* Weighted records: costs 1 to 5, so an even count is not an even load. */
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 8, cost_of, NULL, &report),
           HETLB_OK);
    check_exactly_once(items, count, n0, "weighted records");
    uint64_t load = 0, max = 0, sum = 0;
    for (size_t i = 0; i < count; i++) load += ((record *)items)[i].cost;
    MPI_Allreduce(&load, &max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&load, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(max * (uint64_t)size <= sum + (uint64_t)size * 5 * 8, "weighted loads near even");

    /* Nothing in doubt: resolve is a no-op. */
    size_t held = count;
    EXPECT(hetlb_resolve(b, &items, &count, sizeof(record), 8, NULL, NULL), HETLB_OK);
    CHECK(count == held, "resolve with nothing in doubt");
    EXPECT(hetlb_resolve(NULL, &items, &count, sizeof(record), 8, NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_resolve(b, &items, &count, 0, 0, NULL, NULL), HETLB_ERR_INVALID);
    free(items);
}

/* The two-step form on items of varying size: strings "item <id>" with some padding. */
typedef struct {
    char **text;
    uint64_t *ids;
    size_t n, cap;
    int fail_pack;
} bag;

static size_t item_size_cb(size_t i, void *ctx) {
    bag *g = ctx;
    return sizeof(uint64_t) + strlen(g->text[i]) + 1;
}

static int pack_cb(size_t i, void *buf, size_t sz, void *ctx) {
    bag *g = ctx;
    if (g->fail_pack) return 7;
    memcpy(buf, &g->ids[i], sizeof(uint64_t));
    memcpy((char *)buf + sizeof(uint64_t), g->text[i], sz - sizeof(uint64_t));
    return 0;
}

static int unpack_cb(int from, const void *buf, size_t sz, void *ctx) {
    bag *g = ctx;
    (void)from;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 16;
        g->text = realloc(g->text, g->cap * sizeof(char *));
        g->ids = realloc(g->ids, g->cap * sizeof(uint64_t));
    }
    memcpy(&g->ids[g->n], buf, sizeof(uint64_t));
    g->text[g->n] = malloc(sz - sizeof(uint64_t));
    memcpy(g->text[g->n], (const char *)buf + sizeof(uint64_t), sz - sizeof(uint64_t));
    g->n++;
    return 0;
}

static void test_two_step(hetlb_balancer *b) {
    bag g = {0};
    size_t n0 = rank == 0 ? 999 : (size_t)(rank * 7);
    uint64_t first = 0;
    for (int k = 0; k < rank; k++) first += k == 0 ? 999 : (uint64_t)(k * 7);
    uint64_t total = 0;
    uint64_t mine64 = n0;
    MPI_Allreduce(&mine64, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    g.cap = n0 ? n0 : 1;
    g.text = malloc(g.cap * sizeof(char *));
    g.ids = malloc(g.cap * sizeof(uint64_t));
    for (size_t i = 0; i < n0; i++) {
        g.ids[i] = first + i;
        g.text[i] = malloc(32 + i % 13);
        snprintf(g.text[i], 32 + i % 13, "item %llu", (unsigned long long)(first + i));
    }
    g.n = n0;

    hetlb_plan *p = (hetlb_plan *)1, *q = NULL;
    EXPECT(hetlb_plan_create(NULL, g.n, NULL, &p), HETLB_ERR_NULL);
    CHECK(p == NULL, "*out is NULL after an error");
    EXPECT(hetlb_plan_create(b, g.n, NULL, NULL), HETLB_ERR_NULL);
    EXPECT(hetlb_plan_create(b, g.n, NULL, &p), HETLB_OK);
    size_t nexp = 0, nimp = 0;
    const size_t *idx = NULL, *from = NULL;
    const int *dest = NULL;
    int ranks = 0;
    EXPECT(hetlb_plan_exports(NULL, &nexp, &idx, &dest), HETLB_ERR_NULL);
    EXPECT(hetlb_plan_exports(p, NULL, &idx, &dest), HETLB_ERR_NULL);
    EXPECT(hetlb_plan_imports(NULL, &nimp, &from, &ranks), HETLB_ERR_NULL);
    EXPECT(hetlb_plan_imports(p, &nimp, NULL, &ranks), HETLB_ERR_NULL);
    EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
    EXPECT(hetlb_plan_imports(p, &nimp, &from, &ranks), HETLB_OK);
    CHECK(ranks == size, "imports per rank");
    uint64_t e = nexp, i_ = nimp, te = 0, ti = 0;
    MPI_Allreduce(&e, &te, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&i_, &ti, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(te == ti, "exports = imports in all");
    for (size_t k = 0; k < nexp; k++)
        CHECK(idx[k] < g.n && dest[k] >= 0 && dest[k] < size && dest[k] != rank, "export %zu", k);

    /* NULL callbacks, a failing pack on one rank, plans of different calls: nothing moves. */
    EXPECT(hetlb_migrate(b, p, NULL, pack_cb, unpack_cb, &g), HETLB_ERR_NULL);
    EXPECT(hetlb_migrate(NULL, p, item_size_cb, pack_cb, unpack_cb, &g), HETLB_ERR_NULL);
    EXPECT(hetlb_migrate(b, NULL, item_size_cb, pack_cb, unpack_cb, &g), HETLB_ERR_NULL);
    if (size > 1) {
        g.fail_pack = rank == 0 && nexp > 0;
        int any = g.fail_pack, some = 0;
        MPI_Allreduce(&any, &some, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        EXPECT(hetlb_migrate(b, p, item_size_cb, pack_cb, unpack_cb, &g),
               some ? HETLB_ERR_CALLBACK : HETLB_OK);
        g.fail_pack = 0;
        CHECK(g.n == n0 || !some, "nothing moved after a failing pack");
        if (!some) goto done; /* nothing was exported on rank 0: the plan was carried out */
        EXPECT(hetlb_plan_create(b, g.n, NULL, &q), HETLB_OK);
        EXPECT(hetlb_migrate(b, rank == 0 ? p : q, item_size_cb, pack_cb, unpack_cb, &g),
               HETLB_ERR_MISMATCH);
        CHECK(g.n == n0, "nothing moved after mismatched plans");
        hetlb_plan_free(q);
    }
    EXPECT(hetlb_migrate(b, p, item_size_cb, pack_cb, unpack_cb, &g), HETLB_OK);
done:
    /* Remove the exported items (the export list names them). */
    {
        unsigned char *gone = calloc(n0 ? n0 : 1, 1);
        for (size_t k = 0; k < nexp; k++) gone[idx[k]] = 1;
        size_t kept = 0;
        for (size_t k = 0; k < g.n; k++) {
            if (k < n0 && gone[k]) {
                free(g.text[k]);
                continue;
            }
            g.text[kept] = g.text[k];
            g.ids[kept] = g.ids[k];
            kept++;
        }
        g.n = kept;
        free(gone);
    }
    CHECK(g.n == n0 - nexp + nimp, "held after migrate: %zu", g.n);
    for (size_t k = 0; k < g.n; k++) {
        char want[64];
        snprintf(want, sizeof want, "item %llu", (unsigned long long)g.ids[k]);
        CHECK(strcmp(want, g.text[k]) == 0, "item %zu intact", k);
    }
    record *r = malloc(sizeof(record) * (g.n ? g.n : 1));
    for (size_t k = 0; k < g.n; k++) {
        r[k].id = g.ids[k];
        r[k].check = ~g.ids[k];
        r[k].x = (double)g.ids[k];
    }
    check_exactly_once(r, g.n, total, "two-step");
    free(r);
    hetlb_plan_free(p);
    hetlb_plan_free(NULL);
    for (size_t k = 0; k < g.n; k++) free(g.text[k]);
    free(g.text);
    free(g.ids);
}

/* Fixed 8-byte items (their ids) for the two-step form. */
typedef struct {
    uint64_t *ids;
    size_t n, cap;
} ids;

static size_t id_size_cb(size_t i, void *ctx) {
    (void)i;
    (void)ctx;
    return sizeof(uint64_t);
}

static int id_pack_cb(size_t i, void *buf, size_t sz, void *ctx) {
    ids *g = ctx;
    if (sz != sizeof(uint64_t)) return 1;
    memcpy(buf, &g->ids[i], sizeof(uint64_t));
    return 0;
}

static int id_unpack_cb(int from, const void *buf, size_t sz, void *ctx) {
    ids *g = ctx;
    (void)from;
    if (sz != sizeof(uint64_t)) return 1;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 16;
        g->ids = realloc(g->ids, g->cap * sizeof(uint64_t));
    }
    memcpy(&g->ids[g->n++], buf, sizeof(uint64_t));
    return 0;
}

/* One plan and its migration; returns how many items this rank exported and imported. */
static void plan_and_migrate(hetlb_balancer *b, ids *g, uint64_t total, const char *what,
                             size_t *exported, size_t *imported) {
    hetlb_plan *p = NULL;
    size_t nexp = 0, nimp = 0;
    const size_t *idx = NULL, *from = NULL;
    const int *dest = NULL;
    int ranks = 0;
    EXPECT(hetlb_plan_create(b, g->n, NULL, &p), HETLB_OK);
    if (!p) return;
    EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
    EXPECT(hetlb_plan_imports(p, &nimp, &from, &ranks), HETLB_OK);
    size_t before = g->n;
    EXPECT(hetlb_migrate(b, p, id_size_cb, id_pack_cb, id_unpack_cb, g), HETLB_OK);
    /* Remove the exported items: they are the first `before` ones, named by the plan. */
    unsigned char *gone = calloc(before ? before : 1, 1);
    for (size_t k = 0; k < nexp; k++) gone[idx[k]] = 1;
    size_t kept = 0;
    for (size_t k = 0; k < g->n; k++)
        if (k >= before || !gone[k]) g->ids[kept++] = g->ids[k];
    g->n = kept;
    free(gone);
    CHECK(g->n == before - nexp + nimp, "%s: held after migrate: %zu", what, g->n);
    record *r = malloc(sizeof(record) * (g->n ? g->n : 1));
    for (size_t k = 0; k < g->n; k++) {
        r[k].id = g->ids[k];
        r[k].check = ~g->ids[k];
        r[k].x = (double)g->ids[k];
    }
    check_exactly_once(r, g->n, total, what);
    free(r);
    hetlb_plan_free(p);
    *exported = nexp;
    *imported = nimp;
}

/* The two-step form where some ranks send or receive nothing: only rank 0 holds items at
 * first (every other rank sends nothing); then the same items again, balanced (nothing moves
 * on any rank: every buffer of the exchange is empty); then rank 1 holds nothing and the
 * others an even share (most ranks neither send nor receive). On Open MPI an empty buffer
 * passed as an empty vector's dangling address is MPI_IN_PLACE, and MPI_Alltoallv refuses it
 * (MPI_ERR_ARG, fatal before hetlb's duplicate had MPI_ERRORS_RETURN). */
static void test_two_step_empty_ranks(hetlb_balancer *b) {
    const uint64_t total = 64 * (uint64_t)size;
    ids g = {0};
    if (rank == 0) {
        g.cap = (size_t)total;
        g.ids = malloc(g.cap * sizeof(uint64_t));
        for (uint64_t k = 0; k < total; k++) g.ids[g.n++] = k;
    }
    size_t e = 0, i = 0;
    plan_and_migrate(b, &g, total, "two-step from one rank", &e, &i);
    CHECK(rank == 0 || e == 0, "a rank without items exports nothing");
    plan_and_migrate(b, &g, total, "two-step, balanced", &e, &i);
    CHECK(size == 1 || (e == 0 && i == 0) || (size & (size - 1)) != 0,
          "balanced: nothing moves (%zu out, %zu in)", e, i);
    /* Rank 1 gives its items to rank 0: then rank 1 holds none. */
    if (size > 1) {
        uint64_t n1 = rank == 1 ? g.n : 0, got = 0;
        MPI_Reduce(&n1, &got, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Send(g.ids, (int)g.n, MPI_UINT64_T, 0, 7, MPI_COMM_WORLD);
            g.n = 0;
        } else if (rank == 0) {
            if (g.n + got > g.cap) {
                g.cap = g.n + got;
                g.ids = realloc(g.ids, g.cap * sizeof(uint64_t));
            }
            MPI_Recv(g.ids + g.n, (int)got, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            g.n += got;
        }
        plan_and_migrate(b, &g, total, "two-step to an empty rank", &e, &i);
        CHECK(rank != 1 || e == 0, "the empty rank exports nothing");
    }
    free(g.ids);
}

static size_t huge_size_cb(size_t i, void *ctx) {
    (void)i;
    (void)ctx;
    return SIZE_MAX;
}

/* Every function with extreme counts and sizes, the same on every rank (so that every rank
 * refuses alike, before any message): none may answer HETLB_ERR_INTERNAL (a panic inside);
 * counts that overflow are HETLB_ERR_INVALID. */
static void test_extreme_sizes(hetlb_balancer *b) {
    const size_t counts[] = {(size_t)1 << 62, SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 8 + 1};
    const size_t ncounts = sizeof counts / sizeof counts[0];
    uint64_t loads[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    double caps[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t choice = 0;
    char *json = NULL;
#define NOT_INTERNAL(call)                                                                   \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        CHECK(rc_ != HETLB_ERR_INTERNAL, "%s", #call);                                        \
    } while (0)
    for (size_t k = 0; k < ncounts; k++) {
        size_t n = counts[k];
        EXPECT(hetlb_balance("oem", NULL, n, loads, NULL, out), HETLB_ERR_INVALID);
        EXPECT(hetlb_balance("cwa", "ring:8", n, loads, caps, out), HETLB_ERR_INVALID);
        EXPECT(hetlb_advise(NULL, n, loads, caps, 1, NULL, &choice, &json), HETLB_ERR_INVALID);
        EXPECT(hetlb_advise(NULL, 8, loads, caps, n, NULL, &choice, &json), HETLB_ERR_INVALID);
        EXPECT(hetlb_balancer_advise(b, n, loads, &choice, &json), HETLB_ERR_INVALID);
        NOT_INTERNAL(hetlb_balancer_advise(b, n, NULL, &choice, NULL));
        hetlb_plan *p = NULL;
        EXPECT(hetlb_plan_create(b, n, loads, &p), HETLB_ERR_INVALID);
        /* n items of one unit on every rank: the group's total overflows and every rank
         * refuses, or it is balanced and the plan moves nothing, without memory per item. */
        int rc = hetlb_plan_create(b, n, NULL, &p);
        NOT_INTERNAL(rc);
        CHECK((rc == HETLB_OK) == (p != NULL), "a plan exactly when it succeeds (%d)", rc);
        if (p) {
            size_t nexp = 1;
            const size_t *idx = NULL;
            const int *dest = NULL;
            EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
            CHECK(nexp == 0, "%zu items on every rank: nothing to export (%zu)", n, nexp);
            ids none_held = {0};
            EXPECT(hetlb_migrate(b, p, id_size_cb, id_pack_cb, id_unpack_cb, &none_held),
                   HETLB_OK);
            hetlb_plan_free(p);
        }
        void *items = malloc(64);
        size_t count = n;
        EXPECT(hetlb_rebalance(b, &items, &count, 64, 8, NULL, NULL, NULL), HETLB_ERR_INVALID);
        EXPECT(hetlb_resolve(b, &items, &count, 64, 8, NULL, NULL), HETLB_ERR_INVALID);
        count = 1;
        EXPECT(hetlb_rebalance(b, &items, &count, 64, n, NULL, NULL, NULL), HETLB_ERR_INVALID);
        CHECK(count == 1, "refused calls keep the records");
        free(items);
        /* Records of an extreme size, none held on any rank: refused, or nothing moves. */
        void *none = NULL;
        size_t zero = 0;
        NOT_INTERNAL(hetlb_rebalance(b, &none, &zero, n, 8, NULL, NULL, NULL));
        NOT_INTERNAL(hetlb_resolve(b, &none, &zero, n, 0, NULL, NULL));
        CHECK(zero == 0, "nothing arrives from nowhere");
        free(none);
        CHECK(hetlb_alloc(n) == NULL, "no allocation of %zu bytes", n);
    }
    /* Records of a huge size when no rank holds any: refused or done, never a panic. */
    void *none = NULL;
    size_t zero = 0;
    NOT_INTERNAL(hetlb_rebalance(b, &none, &zero, (size_t)1 << 40, 0, NULL, NULL, NULL));
    NOT_INTERNAL(hetlb_rebalance(b, &none, &zero, 8, 0, NULL, NULL, NULL));
    CHECK(zero == 0, "nothing arrives from nowhere");
    free(none);
    /* Extreme measurements. */
    NOT_INTERNAL(hetlb_record(b, UINT64_MAX, 1e-300));
    NOT_INTERNAL(hetlb_record(b, UINT64_MAX, 1e300));
    NOT_INTERNAL(hetlb_record(b, 0, 1.0));
    EXPECT(hetlb_record(b, 1, HUGE_VAL), HETLB_ERR_INVALID);
    /* Options at the ends of their ranges (every rank alike). */
    const char *options[] = {"timeout=1e308", "topology=ring:4611686018427387904",
                             "speeds=measured:18446744073709551615", "seed=18446744073709551615",
                             "max_rounds=18446744073709551615", "procs_per_group=0"};
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        hetlb_balancer *x = NULL;
        NOT_INTERNAL(hetlb_balancer_create(MPI_COMM_WORLD, "diffusion", options[k], &x));
        if (x) hetlb_balancer_free(x);
    }
    /* A plan whose items claim SIZE_MAX bytes each: refused on every rank, nothing moves. */
    size_t n = rank == 0 ? 100 : 0;
    hetlb_plan *p = NULL;
    EXPECT(hetlb_plan_create(b, n, NULL, &p), HETLB_OK);
    if (p) {
        size_t nexp = 0;
        const size_t *idx = NULL;
        const int *dest = NULL;
        EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
        uint64_t mine = nexp, any = 0;
        MPI_Allreduce(&mine, &any, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        ids g = {0};
        int rc = hetlb_migrate(b, p, huge_size_cb, id_pack_cb, id_unpack_cb, &g);
        CHECK(rc == (any ? HETLB_ERR_INVALID : HETLB_OK), "SIZE_MAX-byte items: %d", rc);
        CHECK(g.n == 0, "nothing arrived");
        free(g.ids);
        hetlb_plan_free(p);
    }
#undef NOT_INTERNAL
}

/* A balanced group: the plan moves nothing and needs no memory per item (2^40 items on
 * every rank, no load array: a 24-byte proxy each would be 24 TiB), and its migrate returns
 * at once; the calls after it go on as usual. */
static void test_two_step_idle(void) {
    const char *rule = (size & (size - 1)) == 0 ? "dem" : "diffusion";
    hetlb_balancer *b = NULL;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, rule, "timeout=20", &b), HETLB_OK);
    if (!b) return;
    const size_t n = (size_t)1 << 40;
    for (int call = 0; call < 3; call++) {
        hetlb_plan *p = NULL;
        EXPECT(hetlb_plan_create(b, n, NULL, &p), HETLB_OK);
        if (!p) break;
        size_t nexp = 1, nimp = 1;
        const size_t *idx = NULL, *from = NULL;
        const int *dest = NULL;
        int ranks = 0;
        EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
        EXPECT(hetlb_plan_imports(p, &nimp, &from, &ranks), HETLB_OK);
        CHECK(nexp == 0 && nimp == 0 && ranks == size, "balanced: %zu out, %zu in", nexp, nimp);
        ids g = {0};
        EXPECT(hetlb_migrate(b, p, id_size_cb, id_pack_cb, id_unpack_cb, &g), HETLB_OK);
        CHECK(g.n == 0, "nothing arrived");
        hetlb_plan_free(p);
    }
    /* The group goes on: a call that moves (all of rank 0's items) after the idle ones. */
    ids g = {0};
    const uint64_t total = 16 * (uint64_t)size;
    if (rank == 0) {
        g.cap = (size_t)total;
        g.ids = malloc(g.cap * sizeof(uint64_t));
        for (uint64_t k = 0; k < total; k++) g.ids[g.n++] = k;
    }
    size_t e = 0, i = 0;
    plan_and_migrate(b, &g, total, "two-step after idle plans", &e, &i);
    free(g.ids);
    hetlb_balancer_free(b);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* From the same start, with direct routing, the two-step form moves the same items as
 * hetlb_rebalance: with unit items each rank's last items leave, the first transfer taking
 * the very last. (With routing=paper a rank may forward items it received or its own,
 * depending on when the items arrive, so only the counts and exactly-once are checked.) */
static void test_two_step_moves_what_rebalance_moves(void) {
    const char *rule = (size & (size - 1)) == 0 ? "dem" : "diffusion";
    const char *routings[] = {"routing=direct", "routing=paper"};
    for (int k = 0; k < 2; k++) {
        hetlb_balancer *b = NULL;
        EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, rule, routings[k], &b), HETLB_OK);
        if (!b) return;
        uint64_t n0 = 5 + 11 * (uint64_t)rank * (uint64_t)rank, first = 0, total = 0;
        MPI_Exscan(&n0, &first, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) first = 0;
        MPI_Allreduce(&n0, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        /* hetlb_rebalance on 8-byte records (the id) */
        size_t count = (size_t)n0;
        void *items = malloc(count * sizeof(uint64_t));
        for (size_t i = 0; i < count; i++) ((uint64_t *)items)[i] = first + i;
        EXPECT(hetlb_rebalance(b, &items, &count, sizeof(uint64_t), 0, NULL, NULL, NULL),
               HETLB_OK);
        /* the two-step form from the same start */
        ids g = {0};
        g.cap = (size_t)n0;
        g.ids = malloc(g.cap * sizeof(uint64_t));
        for (size_t i = 0; i < n0; i++) g.ids[g.n++] = first + i;
        size_t e = 0, i = 0;
        plan_and_migrate(b, &g, total, routings[k], &e, &i);
        qsort(items, count, sizeof(uint64_t), cmp_u64);
        qsort(g.ids, g.n, sizeof(uint64_t), cmp_u64);
        CHECK(count == g.n && (k == 1 || memcmp(items, g.ids, count * sizeof(uint64_t)) == 0),
              "%s: the two-step form holds %zu items, hetlb_rebalance %zu, not the same ones",
              routings[k], g.n, count);
        free(items);
        free(g.ids);
        hetlb_balancer_free(b);
    }
}

/* A peer failure: rank 1 reaches the call long after the others' entry timeout (this
 * program runs below MPI_THREAD_MULTIPLE, so no thread answers for it meanwhile). The others
 * judge it stopped and the call is rolled back everywhere: every rank gets HETLB_ERR_PEER,
 * keeps exactly its records, and the message says so. On a machine so loaded that the others
 * do not judge it within the sleep, the call succeeds instead; either way every record is
 * held exactly once. */
static void test_peer_failure(void) {
    if (size < 2) return;
    hetlb_balancer *b = NULL;
    const char *rule = (size & (size - 1)) == 0 ? "dem" : "diffusion";
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, rule, "timeout=1;entry_timeout=1", &b),
           HETLB_OK);
    if (!b) return;
    const size_t n0 = 1000;
    size_t count = rank == 0 ? n0 : 0, before = count;
    void *items = make_records(count, 0);
    if (rank == 1) sleep(5);
    int rc = hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, NULL);
    int peer = rc == HETLB_ERR_PEER, all_peer = 0, any_peer = 0;
    MPI_Allreduce(&peer, &all_peer, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&peer, &any_peer, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(rc == HETLB_OK || rc == HETLB_ERR_PEER, "a peer failure or a success: %d", rc);
    CHECK(all_peer == any_peer, "every rank sees the failure, or none");
    if (peer) {
        CHECK(count == before, "a rolled-back call keeps every record");
        CHECK(strstr(hetlb_last_error(), "holds the") != NULL, "the message says what is held");
        CHECK(strstr(hetlb_last_error(), "rank 1") != NULL, "the message names rank 1");
    }
    check_exactly_once(items, count, n0, "after a peer failure");
    /* A group that judged a rank failed cannot balance any more: every later call says so
     * (HETLB_ERR_PEER) and keeps the records; a call that went ahead leaves the group whole. */
    before = count;
    rc = hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, NULL);
    if (all_peer) {
        EXPECT(rc, HETLB_ERR_PEER);
        CHECK(strstr(hetlb_last_error(), "cannot balance any more") != NULL, "the group is lost");
        CHECK(count == before, "a lost group keeps every record");
    } else {
        EXPECT(rc, HETLB_OK);
    }
    check_exactly_once(items, count, n0, "after the next call");
    if (rank == 0) printf("test_api: the late rank was %s\n", all_peer ? "judged stopped" : "in time");
    free(items);
    hetlb_balancer_free(b);
}

/* A bad argument on one rank only: that rank refuses the call and the others fail at once
 * (HETLB_ERR_PEER naming it) instead of waiting for it; the next call goes ahead. */
static void test_refusal(hetlb_balancer *b) {
    if (size < 2) return;
    const size_t n0 = 400;
    size_t count = rank == 0 ? n0 : 0;
    void *items = make_records(count, 0);
    double start = MPI_Wtime();
    int rc = hetlb_rebalance(b, &items, &count, sizeof(record), rank == 1 ? 57 : 8, NULL, NULL,
                             NULL);
    if (rank == 1) {
        EXPECT(rc, HETLB_ERR_INVALID);
        CHECK(strstr(hetlb_last_error(), "id_offset") != NULL, "its own error");
    } else {
        EXPECT(rc, HETLB_ERR_PEER);
        CHECK(strstr(hetlb_last_error(), "rank 1") != NULL, "the refusing rank named");
        CHECK(strstr(hetlb_last_error(), "id_offset") != NULL, "and its reason");
        CHECK(MPI_Wtime() - start < 5.0, "at once, not after the timeout");
    }
    CHECK(count == (rank == 0 ? n0 : 0), "a refused call keeps every record");
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, NULL), HETLB_OK);
    check_exactly_once(items, count, n0, "after a refusal");
    free(items);
}

/* The two-step form when one rank's arguments are wrong: rank 1 passes no pack callback to
 * hetlb_migrate; it gets HETLB_ERR_NULL and every other rank HETLB_ERR_PEER naming it at once
 * (not a wait in MPI's collectives); nothing moves, and the next plan goes ahead. */
static void test_two_step_refusal(hetlb_balancer *b) {
    if (size < 2) return;
    ids g = {0};
    const uint64_t total = 32 * (uint64_t)size;
    if (rank == 0) {
        g.cap = (size_t)total;
        g.ids = malloc(g.cap * sizeof(uint64_t));
        for (uint64_t k = 0; k < total; k++) g.ids[g.n++] = k;
    }
    hetlb_plan *p = NULL;
    EXPECT(hetlb_plan_create(b, g.n, NULL, &p), HETLB_OK);
    double start = MPI_Wtime();
    int rc = hetlb_migrate(b, p, id_size_cb, rank == 1 ? NULL : id_pack_cb, id_unpack_cb, &g);
    if (rank == 1) {
        EXPECT(rc, HETLB_ERR_NULL);
    } else {
        EXPECT(rc, HETLB_ERR_PEER);
        CHECK(strstr(hetlb_last_error(), "rank 1") != NULL, "the refusing rank named");
        CHECK(MPI_Wtime() - start < 5.0, "at once");
    }
    CHECK(g.n == (rank == 0 ? total : 0), "nothing moved: %zu", g.n);
    hetlb_plan_free(p);
    size_t e = 0, i = 0;
    plan_and_migrate(b, &g, total, "two-step after a refusal", &e, &i);
    free(g.ids);
}

/* Each rank passes only its own capacity (rank + 1): the loads end within 1% of the
 * capacity-proportional targets; a capacity-blind rule refuses it. */
static void test_own_capacity(void) {
    char options[64];
    snprintf(options, sizeof options, "speeds=own:%d", rank + 1);
    hetlb_balancer *b = NULL;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "cwa", options, &b), HETLB_OK);
    hetlb_balancer *blind = NULL;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "oem", options, &blind), HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "capacity-blind") != NULL, "oem refuses capacities");
    if (!b) return;
    const size_t n0 = 1000 * (size_t)size;
    size_t count = rank == 0 ? n0 : 0;
    void *items = make_records(count, 0);
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, NULL), HETLB_OK);
    check_exactly_once(items, count, n0, "own capacities");
    double total_cap = (double)size * (size + 1) / 2.0;
    double target = (double)n0 * (rank + 1) / total_cap;
    CHECK(fabs((double)count - target) <= 0.01 * target + 1.0, "%zu records against %g", count,
          target);
    free(items);
    hetlb_balancer_free(b);
}

/* Records with positions (the option coords=0:1, the double x at byte 0): rank 0 holds the
 * segment [0, n0) and gives each rank a piece; the report's spread falls. */
static void test_coords(void) {
    if (size < 2) return;
    hetlb_balancer *b = NULL;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dishet", "routing=direct;coords=0:1", &b),
           HETLB_OK);
    hetlb_balancer *bad = NULL;
    EXPECT(hetlb_balancer_create(MPI_COMM_WORLD, "dishet", "coords=0:4", &bad),
           HETLB_ERR_INVALID);
    CHECK(strstr(hetlb_last_error(), "coords") != NULL, "the option named");
    if (!b) return;
    const size_t n0 = 2000;
    size_t count = rank == 0 ? n0 : 0;
    void *items = make_records(count, 0);
    hetlb_report report;
    memset(&report, 0, sizeof report);
    EXPECT(hetlb_rebalance(b, &items, &count, sizeof(record), 8, NULL, NULL, &report), HETLB_OK);
    check_exactly_once(items, count, n0, "positioned records");
    CHECK(report.spread_before > 0.99, "one rank held everything: %g", report.spread_before);
    CHECK(report.spread_after < report.spread_before, "the spread falls: %g -> %g",
          report.spread_before, report.spread_after);
    /* The two-step form with coordinates. */
    double *xs = count ? malloc(count * sizeof(double)) : NULL;
    for (size_t i = 0; i < count; i++) xs[i] = ((record *)items)[i].x;
    hetlb_plan *p = NULL;
    EXPECT(hetlb_plan_create_at(b, count, NULL, xs, 1, &p), HETLB_OK);
    if (p) {
        size_t nexp = 0;
        const size_t *idx = NULL;
        const int *dest = NULL;
        EXPECT(hetlb_plan_exports(p, &nexp, &idx, &dest), HETLB_OK);
        CHECK(nexp == 0, "a balanced start exports nothing: %zu", nexp);
        hetlb_plan_free(p);
        p = NULL;
    }
    EXPECT(hetlb_plan_create_at(b, count, NULL, xs, 4, &p), HETLB_ERR_INVALID);
    CHECK(p == NULL, "no plan after an error");
    free(xs);
    free(items);
    hetlb_balancer_free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_no_mpi_functions();
    hetlb_balancer *b = NULL;
    test_create(&b);
    if (b) {
        test_advise(b);
        test_rebalance(b);
        test_two_step(b);
        test_two_step_empty_ranks(b);
        test_extreme_sizes(b);
        test_refusal(b);
        test_two_step_refusal(b);
        hetlb_balancer_free(b);
    }
    test_two_step_idle();
    test_two_step_moves_what_rebalance_moves();
    test_coords();
    test_own_capacity();
    test_peer_failure();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_api: %d ranks, %d failed checks\n", size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
