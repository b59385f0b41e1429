/* The smallest program that uses an installed hetlb: compiled through pkg-config and through
 * CMake's find_package(hetlb) in CI. */
#include <hetlb.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    uint64_t loads[4] = {8, 0, 0, 0}, out[4];
    int rc = hetlb_balance("cwa", NULL, 4, loads, NULL, out);
    hetlb_balancer *b = NULL;
    if (rc == 0) rc = hetlb_balancer_create(MPI_COMM_WORLD, "cwa", NULL, &b);
    hetlb_balancer_free(b);
    printf("hetlb %s: %s\n", hetlb_version(), rc == 0 ? "ok" : hetlb_last_error());
    MPI_Finalize();
    return rc == 0 && out[0] == 2 ? 0 : 1;
}
