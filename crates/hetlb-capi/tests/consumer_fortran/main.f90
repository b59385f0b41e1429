! A Fortran program built against the installed prefix exactly as docs/c-api.md says: the
! module from include/ (hetlb.mod), its procedures from -lhetlb_fortran (pkg-config
! hetlb-fortran, or CMake's hetlb::fortran). Rebalances a few ids and checks they are all kept.
program consumer
  use mpi
  use hetlb
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: ierr, rank, size
  type(c_ptr) :: b, items
  integer(c_size_t) :: count
  integer(c_int64_t), pointer :: ids(:)
  integer(c_int64_t) :: mine, total
  type(hetlb_report) :: report
  integer :: i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (hetlb_balancer_create(MPI_COMM_WORLD, 'dishet', b, 'routing=direct') /= HETLB_OK) then
    print *, 'create: ', hetlb_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  count = 0
  if (rank == 0) count = 100
  items = hetlb_alloc(max(count, 1_c_size_t) * 8)
  call c_f_pointer(items, ids, [count])
  do i = 1, int(count)
    ids(i) = i - 1
  end do
  if (hetlb_rebalance(b, items, count, 8_c_size_t, 0_c_size_t, report) /= HETLB_OK) then
    print *, 'rebalance: ', hetlb_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  mine = int(count, c_int64_t)
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= 100) then
    print *, 'records held: ', total
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call hetlb_free(items)
  call hetlb_balancer_free(b)
  if (rank == 0) print '(a)', 'consumer (Fortran): every record held once'
  call MPI_Finalize(ierr)
end program consumer
