/* hetlb's C interface. Generated from crates/hetlb-capi by cbindgen: do not edit.
 *
 * Every function returns 0 (HETLB_OK) or a negative HETLB_ERR_* code, with the message in
 * hetlb_last_error() (per thread). No function aborts or panics on bad arguments.
 *
 * MPI errors on hetlb's duplicate of the communicator are returned (MPI_ERRORS_RETURN) and
 * become HETLB_ERR_MPI; they never end the job.
 *
 * MPI ABI: libhetlb is built against one MPI library, MPICH or Open MPI (their MPI_Comm
 * handles differ: an `int` in MPICH, a pointer in Open MPI). Link it into programs built
 * with the same MPI (its mpicc/mpifort, e.g. mpicc.mpich or mpicc.openmpi), or, for a
 * library built against MPICH, an MPI of the MPICH ABI (Intel MPI, Cray MPICH, MVAPICH).
 *
 * The MPI functions are declared when HETLB_MPI is defined, which this header does unless
 * HETLB_NO_MPI is defined before it is included (for a library built without the `mpi`
 * feature, which holds only hetlb_version, hetlb_last_error, hetlb_balance, hetlb_alloc
 * and hetlb_free). */

#ifndef HETLB_H
#define HETLB_H

#include <stddef.h>
#include <stdint.h>
#if !defined(HETLB_NO_MPI) && !defined(HETLB_MPI)
#define HETLB_MPI 1
#endif
#if defined(HETLB_MPI)
#include <mpi.h>
#endif


/**
 * Success.
 */
#define HETLB_OK 0

/**
 * A pointer argument that must not be NULL was NULL.
 */
#define HETLB_ERR_NULL -1

/**
 * An invalid argument: an unknown rule, a bad options string or topology, zero-size records,
 * an id offset out of range, a string that is not UTF-8, sizes that overflow.
 */
#define HETLB_ERR_INVALID -2

/**
 * The ranks disagree: different rules, options or record sizes, or a plan of another call.
 */
#define HETLB_ERR_MISMATCH -3

/**
 * The rule refused the loads (a total that overflows, say).
 */
#define HETLB_ERR_PLAN -4

/**
 * A peer failed (stopped answering, or gave the call up): the call was rolled back and this
 * rank holds exactly the items it held before (the message says how many).
 */
#define HETLB_ERR_PEER -5

/**
 * The call's outcome is not known on this rank yet: the items it involves are kept aside
 * until `hetlb_resolve` settles it (the message says how many are aside).
 */
#define HETLB_ERR_IN_DOUBT -6

/**
 * Memory could not be had (a `realloc` of the records failed): the call was rolled back.
 */
#define HETLB_ERR_NOMEM -7

/**
 * MPI refused, or is not initialised, or the transport failed.
 */
#define HETLB_ERR_MPI -8

/**
 * An application callback returned non-zero (the two-step form).
 */
#define HETLB_ERR_CALLBACK -9

/**
 * A bug in hetlb (a panic caught at the boundary); the message says where.
 */
#define HETLB_ERR_INTERNAL -10

#if defined(HETLB_MPI)
/**
 * One rank's balancer, opaque to C: made by `hetlb_balancer_create` on every rank of a
 * communicator, freed by `hetlb_balancer_free`.
 */
typedef struct hetlb_balancer hetlb_balancer;
#endif

#if defined(HETLB_MPI)
/**
 * A plan made by `hetlb_plan_create`, opaque to C; freed by `hetlb_plan_free`.
 */
typedef struct hetlb_plan hetlb_plan;
#endif

#if defined(HETLB_MPI)
/**
 * A record's load, from the application: `load_of(record, ctx)`.
 */
typedef uint64_t (*hetlb_load_fn)(const void *item, void *ctx);
#endif

#if defined(HETLB_MPI)
/**
 * What `hetlb_rebalance` reports (when its `report` argument is not NULL), filled on
 * success.
 */
typedef struct hetlb_report {
  /**
   * Max/mean of the ranks' loads (relative to their capacities) before the call.
   */
  double imbalance_before;
  /**
   * The same after the call.
   */
  double imbalance_after;
  /**
   * Records this rank sent (forwarded ones included).
   */
  uint64_t items_sent;
  /**
   * Records this rank received.
   */
  uint64_t items_received;
  /**
   * Bytes this rank sent.
   */
  uint64_t bytes_sent;
  /**
   * Seconds the call took on this rank.
   */
  double seconds;
  /**
   * How scattered the ranks' regions were before the call, with the option `coords`: the
   * worst rank's RMS distance of its records from their centroid over that of all records
   * from theirs (1: as scattered as a random assignment; NaN without positions).
   */
  double spread_before;
  /**
   * The same after the call.
   */
  double spread_after;
  /**
   * 1 when the ranks checked their loads at this call; 0 when the trigger `auto` skipped
   * it without a message (its `check_budget`): nothing moved and the imbalance fields
   * are NaN.
   */
  int32_t checked;
  /**
   * 1 when the trigger held the move back (the predicted gain did not exceed the cost ×
   * margin): nothing moved.
   */
  int32_t held_back;
} hetlb_report;
#endif

#if defined(HETLB_MPI)
/**
 * The size in bytes of exported item `local_index` once packed.
 */
typedef size_t (*hetlb_size_fn)(size_t local_index, void *ctx);
#endif

#if defined(HETLB_MPI)
/**
 * Packs exported item `local_index` into `buf` (`size` bytes, as `size_of` said, with no
 * particular alignment: copy into it with `memcpy`); 0 on success.
 */
typedef int (*hetlb_pack_fn)(size_t local_index, void *buf, size_t size, void *ctx);
#endif

#if defined(HETLB_MPI)
/**
 * Unpacks one item from `from_rank` (`size` bytes at `buf`, with no particular alignment:
 * copy it out with `memcpy`), adding it to the application's items; 0 on success.
 */
typedef int (*hetlb_unpack_fn)(int from_rank, const void *buf, size_t size, void *ctx);
#endif

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Whether moving pays, with which rule and which routing, before anything moves: every
 * candidate rule (`algorithms`, comma-separated; NULL for every rule that fits the network)
 * with every routing is planned on the `n` `loads` at the measured `speeds` (`n_speeds`
 * values: 1 for all nodes, or `n`), and predicted. `*choice` (when not NULL) receives the
 * index of the candidate to follow in the document's `candidates`, or -1 to stay;
 * `*json` (when not NULL) receives the whole document `hetlb advise --format json` prints,
 * a NUL-terminated string from `malloc` that the caller frees (`free` or `hetlb_free`).
 *
 * `options` (`"key=value;..."`, NULL for the defaults): `topology` (a spec; default the
 * hypercube of `n` nodes), `routing` (`paper`, `direct` or `paper,direct`, the default),
 * `bytes_per_unit` (8), `seconds_per_message` (1e-5), `seconds_per_byte` (1e-9), `trigger`
 * (`always` or `auto[:HORIZON[:MARGIN]]`, default `auto`), `max_memory_bytes` (8 GiB).
 *
 * Returns 0, or a negative `HETLB_ERR_*` code with the message in `hetlb_last_error()`:
 * `HETLB_ERR_INVALID` for `n` or `n_speeds` above 2^24 (a network's limit), checked before
 * any array is read.
 *
 * # Safety
 * `algorithms` and `options` are NULL or NUL-terminated strings; `loads` points to `n`
 * values and `speeds` to `n_speeds`; `choice` and `json` are NULL or point to writable
 * values.
 */
int hetlb_advise(const char *algorithms,
                 size_t n,
                 const uint64_t *loads,
                 const double *speeds,
                 size_t n_speeds,
                 const char *options,
                 int64_t *choice,
                 char **json);

/**
 * The library's version, as a static NUL-terminated string ("0.1.0").
 */
const char *hetlb_version(void);

/**
 * This thread's last error message, `""` when the last hetlb call on this thread succeeded
 * (or none was made). The pointer stays valid until the next hetlb call on this thread.
 */
const char *hetlb_last_error(void);

/**
 * Balances `n` loads with the rule `algorithm` (any name `hetlb balance --algorithm` takes:
 * `dem`, `oem`, `cwa`, `dishet`, `diffusion`, …) on `topology` (a spec such as `ring:8` or
 * `torus:2x4`; NULL for the hypercube of `n` nodes, where a count that is not a power of
 * two runs the hypercube rules embedded in a cube) and writes the `n` loads after
 * balancing to `final_loads`. `capacities` are the nodes' relative speeds (NULL: equal).
 * No MPI: this is the plan `hetlb balance` prints.
 *
 * Returns 0, or a negative `HETLB_ERR_*` code with the message in `hetlb_last_error()`:
 * `HETLB_ERR_INVALID` for more than 2^24 nodes (a network's limit), checked before any
 * array is read.
 *
 * # Safety
 * `algorithm` and `topology` are NULL or NUL-terminated strings; `loads`, `capacities`
 * (when not NULL) and `final_loads` point to `n` values each.
 */
int hetlb_balance(const char *algorithm,
                  const char *topology,
                  size_t n,
                  const uint64_t *loads,
                  const double *capacities,
                  uint64_t *final_loads);

/**
 * `malloc(bytes)`: an array `hetlb_rebalance` may `realloc`. NULL when it cannot be had
 * (or `bytes` is 0).
 */
void *hetlb_alloc(size_t bytes);

/**
 * `free(p)`: frees an array from `hetlb_alloc` or `hetlb_rebalance`. NULL is ignored.
 *
 * # Safety
 * `p` is NULL or from `malloc`/`realloc`/`hetlb_alloc`, not freed yet.
 */
void hetlb_free(void *p);

#if defined(HETLB_MPI)
/**
 * Creates this rank's balancer on `comm` (collective: every rank of `comm` calls it, with
 * the same `rule` and `options`). hetlb works on a duplicate of `comm`; the application
 * keeps using `comm`. MPI must be initialised, and stay so until `hetlb_balancer_free`.
 *
 * `rule`: any name `hetlb balance --algorithm` takes (`dem`, `oem`, `cwa`, `dishet`,
 * `diffusion`, …). `options`: NULL or `"key=value;..."`, e.g.
 * `"speeds=measured;timeout=10;topology=ring:8"` (keys in `docs/c-api.md`).
 *
 * Returns 0 and sets `*out`, or a negative `HETLB_ERR_*` code (and `*out` is NULL).
 *
 * # Safety
 * `comm` is a live intra-communicator; `rule` and `options` are NULL or NUL-terminated
 * strings; `out` is NULL or points to writable memory for a pointer.
 */
int hetlb_balancer_create(MPI_Comm comm,
                          const char *rule,
                          const char *options,
                          struct hetlb_balancer **out);
#endif

#if defined(HETLB_MPI)
/**
 * `hetlb_balancer_create` with a Fortran communicator handle (an `integer`, converted
 * with `MPI_Comm_f2c`): what the Fortran module calls.
 *
 * # Safety
 * As `hetlb_balancer_create`.
 */
int hetlb_balancer_create_f(MPI_Fint comm,
                            const char *rule,
                            const char *options,
                            struct hetlb_balancer **out);
#endif

#if defined(HETLB_MPI)
/**
 * Reports that this rank processed `units` units of work in `seconds` (used by
 * `speeds=measured`, ignored otherwise). Call it once per step of the application's loop.
 *
 * Returns 0, or `HETLB_ERR_NULL` / `HETLB_ERR_INVALID` (seconds not positive and finite).
 *
 * # Safety
 * `b` is NULL or a balancer from `hetlb_balancer_create`, not freed.
 */
int hetlb_record(struct hetlb_balancer *b, uint64_t units, double seconds);
#endif

#if defined(HETLB_MPI)
/**
 * What `hetlb_rebalance` would do now, moving nothing (collective: every rank calls it and
 * gets the same advice). `loads` gives this rank's `n` items' loads (NULL: 1 each). Every
 * candidate rule (the balancer's rule, or rule `auto`'s candidates) is planned on the
 * ranks' loads and predicted at the measured speeds with the cost model in force.
 * `*choice` (when not NULL) receives the index of the candidate `hetlb_rebalance` would
 * follow, or -1 when it would move nothing (also while the trigger `auto` skips calls after
 * a held-back check: `skips` in the JSON counts them); `*json` (when not NULL) the advice as
 * JSON (`candidates` with each rule's `prediction` and `final_loads`, `choice`, `horizon`,
 * `skips`), a
 * NUL-terminated string from `malloc` that the caller frees (`free` or `hetlb_free`).
 *
 * Needs `speeds=measured` and a `hetlb_record` on every rank (`HETLB_ERR_PLAN` otherwise,
 * on every rank). Returns 0, or a negative `HETLB_ERR_*` code with the message in
 * `hetlb_last_error()`.
 *
 * # Safety
 * `b` is a live balancer; `loads` is NULL or points to `n` values; `choice` and `json` are
 * NULL or point to writable values.
 */
int hetlb_balancer_advise(struct hetlb_balancer *b,
                          size_t n,
                          const uint64_t *loads,
                          int64_t *choice,
                          char **json);
#endif

#if defined(HETLB_MPI)
/**
 * Every rank's load (in units) after the last `hetlb_rebalance` that checked the loads
 * (`hetlb_report.checked`): `*n` values at `*loads`, owned by the balancer and valid until
 * its next call or `hetlb_balancer_free`; `*n` is 0 before the first such call.
 *
 * Returns 0, or `HETLB_ERR_NULL`.
 *
 * # Safety
 * `b` is NULL or a live balancer; `n` and `loads` are NULL or writable.
 */
int hetlb_balancer_loads(const struct hetlb_balancer *b, size_t *n, const uint64_t **loads);
#endif

#if defined(HETLB_MPI)
/**
 * This rank's number in the balancer's communicator (as `MPI_Comm_rank`), or a negative
 * code for NULL.
 *
 * # Safety
 * As `hetlb_record`.
 */
int hetlb_balancer_rank(const struct hetlb_balancer *b);
#endif

#if defined(HETLB_MPI)
/**
 * Frees a balancer (collective: every rank frees its own, before `MPI_Finalize`). Records in
 * doubt (after `HETLB_ERR_IN_DOUBT`, not resolved) are lost with it. NULL is ignored.
 *
 * # Safety
 * `b` is NULL or a balancer from `hetlb_balancer_create`, not freed yet.
 */
void hetlb_balancer_free(struct hetlb_balancer *b);
#endif

#if defined(HETLB_MPI)
/**
 * Rebalances this rank's records with the others' (collective: every rank of the balancer's
 * communicator calls it, with the same `item_size`).
 *
 * The records are `*count` records of `item_size` bytes end to end in `*items`, an array from
 * `malloc` (NULL when `*count` is 0). Each carries a `uint64_t` id at byte `id_offset`
 * (native byte order; for checks, never routing). `load_of(record, ctx)` gives a record's
 * load (NULL: 1 per record) and must give it the same value on every rank. On return
 * `*items` may have been `realloc`'ed and `*count` changed: the records this rank kept, in
 * their order, then those it received. `report`, when not NULL, is filled on success.
 *
 * Returns 0, or a negative `HETLB_ERR_*` code; on every return `*items`/`*count` describe
 * exactly the records this rank holds (after `HETLB_ERR_IN_DOUBT`, some are kept aside until
 * `hetlb_resolve`; the message says how many).
 *
 * # Safety
 * `b` is a live balancer; `items` and `count` point to the array's pointer and count;
 * `load_of` is NULL or a function that reads one record; `report` is NULL or writable.
 */
int hetlb_rebalance(struct hetlb_balancer *b,
                    void **items,
                    size_t *count,
                    size_t item_size,
                    size_t id_offset,
                    hetlb_load_fn load_of,
                    void *ctx,
                    struct hetlb_report *report);
#endif

#if defined(HETLB_MPI)
/**
 * Settles a call that ended in `HETLB_ERR_IN_DOUBT`: waits (up to the timeout) for the
 * outcome and puts the records it gives this rank back into `*items` (`realloc`'ed as
 * needed). Does nothing when no call is in doubt. Same arguments as `hetlb_rebalance`.
 *
 * Returns 0, `HETLB_ERR_IN_DOUBT` again when the outcome is still unknown, or another
 * negative code.
 *
 * # Safety
 * As `hetlb_rebalance`.
 */
int hetlb_resolve(struct hetlb_balancer *b,
                  void **items,
                  size_t *count,
                  size_t item_size,
                  size_t id_offset,
                  hetlb_load_fn load_of,
                  void *ctx);
#endif

#if defined(HETLB_MPI)
/**
 * Decides where this rank's `n` items go (collective). `loads` gives each item's load (NULL:
 * 1 each). Nothing moves: read the plan with `hetlb_plan_exports` and `hetlb_plan_imports`,
 * then call `hetlb_migrate` (or not). Returns 0 and sets `*out`, or a negative code (`*out`
 * is then NULL).
 *
 * # Safety
 * `b` is a live balancer; `loads` is NULL or points to `n` values; `out` is writable.
 */
int hetlb_plan_create(struct hetlb_balancer *b,
                      size_t n,
                      const uint64_t *loads,
                      struct hetlb_plan **out);
#endif

#if defined(HETLB_MPI)
/**
 * `hetlb_plan_create` for items with positions: `coords` holds `dim` doubles (1 to 3) per
 * item, item after item (`coords[i*dim + k]`), and the plan keeps subdomains compact as
 * `hetlb_rebalance` does with the option `coords` (the items nearest the receiving rank's
 * region go; direct plans pair the nearest regions first). `coords` NULL (with `dim` 0) is
 * `hetlb_plan_create`. A position that is not finite is refused (`HETLB_ERR_PLAN`), and
 * every other rank's call fails at once naming this rank.
 *
 * # Safety
 * As `hetlb_plan_create`; `coords` is NULL or points to `n * dim` values.
 */
int hetlb_plan_create_at(struct hetlb_balancer *b,
                         size_t n,
                         const uint64_t *loads,
                         const double *coords,
                         size_t dim,
                         struct hetlb_plan **out);
#endif

#if defined(HETLB_MPI)
/**
 * The plan's exports: `*n` items leave this rank; `(*local_index)[k]` goes to
 * `(*dest_rank)[k]` (sorted by destination, then index). The arrays belong to the plan and
 * live until `hetlb_plan_free`.
 *
 * # Safety
 * `p` is a live plan; `n`, `local_index` and `dest_rank` are writable.
 */
int hetlb_plan_exports(const struct hetlb_plan *p,
                       size_t *n,
                       const size_t **local_index,
                       const int **dest_rank);
#endif

#if defined(HETLB_MPI)
/**
 * The plan's imports: `*n` items arrive in all; `(*from_rank)[r]` of them from rank `r`, for
 * the `*ranks` ranks of the communicator. The array belongs to the plan.
 *
 * # Safety
 * `p` is a live plan; `n`, `from_rank` and `ranks` are writable.
 */
int hetlb_plan_imports(const struct hetlb_plan *p, size_t *n, const size_t **from_rank, int *ranks);
#endif

#if defined(HETLB_MPI)
/**
 * Frees a plan. NULL is ignored.
 *
 * # Safety
 * `p` is NULL or a plan from `hetlb_plan_create`, not freed yet.
 */
void hetlb_plan_free(struct hetlb_plan *p);
#endif

#if defined(HETLB_MPI)
/**
 * Carries out plan `p` (collective, with every rank's plan of the same call): packs every
 * exported item with `size_of` and `pack`, sends them straight to their destinations, and
 * calls `unpack` for every item received (by source rank, then in the sender's export
 * order). The exported items stay in the application's hands: once this returns 0 they
 * belong to their destinations, and the application removes them (the export list names
 * them).
 *
 * Returns 0; `HETLB_ERR_CALLBACK` when a `size_of` or `pack` on any rank failed (nothing
 * moved on any rank) or an `unpack` on this rank failed (the message says which items were
 * not unpacked); `HETLB_ERR_MISMATCH` when the ranks passed plans of different calls
 * (nothing moved); `HETLB_ERR_PEER` when a rank did not reach the call within the entry
 * timeout, refused it for its own bad arguments, or stopped while the items travelled
 * (named; nothing is unpacked on any rank that returns the error, and the exports stay
 * with their senders; only a rank that stops in the final barrier can leave the others
 * divided).
 *
 * The items travel over hetlb's endpoint, not MPI collectives: one byte string per
 * destination, waited for as `hetlb_rebalance` waits. When nothing moves on any rank (the
 * plan has no export and no import on every rank, as after a call of an already balanced
 * group), the newest plan returns 0 at once, without communicating, and `hetlb_plan_create`
 * made it for the price of one gather, without a proxy per item.
 *
 * # Safety
 * `b` and `p` are live; the callbacks are NULL or functions of the given signatures;
 * `ctx` is passed to them untouched.
 */
int hetlb_migrate(struct hetlb_balancer *b,
                  const struct hetlb_plan *p,
                  hetlb_size_fn size_of,
                  hetlb_pack_fn pack,
                  hetlb_unpack_fn unpack,
                  void *ctx);
#endif

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* HETLB_H */
