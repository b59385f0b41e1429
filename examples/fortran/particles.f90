! Particles whose cost drifts, rebalanced every few steps through hetlb's Fortran module,
! with a check after every rebalance that every particle id survives exactly once; at the end
! the same particles move once more through the two-step form (a plan, then pack/unpack
! callbacks), checked the same way.
!
! Build and run (after installing hetlb, see docs/c-api.md):
!   export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
!   mpifort examples/fortran/particles.f90 $(pkg-config --cflags --libs hetlb-fortran) -o particles_f
!   mpiexec -n 4 ./particles_f
module particles_mod
  use, intrinsic :: iso_c_binding
  implicit none
  !> One particle: 32 bytes, the id first.
  type, bind(c) :: particle
    integer(c_int64_t) :: id
    real(c_double) :: x, v, cost
  end type particle
  !> The two-step form's state: the particles being packed, those unpacked.
  type(particle), pointer :: packing(:) => null()
  type(particle), allocatable :: arrived(:)
  integer :: narrived = 0
contains
  !> A particle's load: its cost in whole units (at least 1).
  function cost_of(item, ctx) bind(c, name='particle_cost') result(units)
    type(c_ptr), value :: item, ctx
    integer(c_int64_t) :: units
    type(particle), pointer :: p
    call c_f_pointer(item, p)
    units = max(1_c_int64_t, int(p%cost, c_int64_t))
    if (c_associated(ctx)) units = units ! no context is used
  end function cost_of

  !> The packed size of a particle.
  function particle_size(index, ctx) bind(c, name='particle_size') result(bytes)
    integer(c_size_t), value :: index
    type(c_ptr), value :: ctx
    integer(c_size_t) :: bytes
    bytes = 32
    if (c_associated(ctx) .or. index < 0) bytes = 32 ! no context is used
  end function particle_size

  !> Packs particle `index` (from 0) into buf.
  function particle_pack(index, buf, bytes, ctx) bind(c, name='particle_pack') result(rc)
    integer(c_size_t), value :: index, bytes
    type(c_ptr), value :: buf, ctx
    integer(c_int) :: rc
    integer(c_int8_t), pointer :: out(:)
    call c_f_pointer(buf, out, [bytes])
    out = transfer(packing(index + 1), out, size(out))
    rc = 0
    if (c_associated(ctx)) rc = 0 ! no context is used
  end function particle_pack

  !> Unpacks one particle (buf may be unaligned: copied byte by byte).
  function particle_unpack(from, buf, bytes, ctx) bind(c, name='particle_unpack') result(rc)
    integer(c_int), value :: from
    type(c_ptr), value :: buf, ctx
    integer(c_size_t), value :: bytes
    integer(c_int) :: rc
    integer(c_int8_t), pointer :: in(:)
    type(particle) :: p
    rc = 1
    if (bytes /= 32 .or. from < 0 .or. c_associated(ctx)) return
    call c_f_pointer(buf, in, [bytes])
    p = transfer(in, p)
    narrived = narrived + 1
    arrived(narrived) = p
    rc = 0
  end function particle_unpack
end module particles_mod

program particles
  use mpi
  use hetlb
  use particles_mod
  implicit none
  integer, parameter :: steps = 14, every = 4
  integer :: ierr, rank, nranks, step, i, rc
  integer(c_int64_t) :: total, first, mine
  integer(c_size_t) :: count
  integer(c_size_t), parameter :: item_size = 32, id_offset = 0
  type(c_ptr) :: b, items
  type(particle), pointer :: parts(:)
  type(hetlb_report) :: report
  type(c_funptr) :: load_of, size_fn, pack_fn, unpack_fn
  type(c_ptr) :: plan, index_p, dest_p, from_p, new_items
  integer(c_size_t) :: n_exports, n_imports, kept
  integer(c_size_t), pointer :: export_index(:)
  integer(c_int) :: n_ranks
  integer(c_int64_t), allocatable, target :: loads(:)
  logical, allocatable :: keep(:)
  type(particle), pointer :: moved(:)
  character(len=16) :: rule

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (iand(nranks, nranks - 1) == 0) then
    rule = 'dem'
  else
    rule = 'diffusion'
  end if
  load_of = c_funloc(cost_of)
  rc = hetlb_balancer_create(MPI_COMM_WORLD, trim(rule), b, 'timeout=30')
  call check(rc, 'hetlb_balancer_create')

  ! Rank r starts with 1000 * (r + 1) particles.
  mine = 1000_c_int64_t * (rank + 1)
  first = 1000_c_int64_t * rank * (rank + 1) / 2
  total = 1000_c_int64_t * nranks * (nranks + 1) / 2
  count = int(mine, c_size_t)
  items = hetlb_alloc(count * item_size)
  call c_f_pointer(items, parts, [count])
  do i = 1, int(count)
    parts(i)%id = first + i - 1
    parts(i)%x = real(parts(i)%id, c_double) / real(total, c_double)
    parts(i)%v = 0.01d0
    parts(i)%cost = 1
  end do

  do step = 1, steps
    ! Move the particles; a particle's cost grows with its position (the drift).
    do i = 1, int(count)
      parts(i)%x = modulo(parts(i)%x + parts(i)%v, 1.0d0)
      parts(i)%cost = 1 + 4 * parts(i)%x
    end do
    if (mod(step, every) == 0) then
      rc = hetlb_rebalance(b, items, count, item_size, id_offset, report, load_of)
      call check(rc, 'hetlb_rebalance')
      call c_f_pointer(items, parts, [count])
      call check_ids()
      if (rank == 0) print '(a,i0,a,f6.3,a,f6.3)', 'step ', step, ': imbalance ', &
          report%imbalance_before, ' -> ', report%imbalance_after
    end if
  end do

  ! The two-step form: a plan by cost, then the particles move through the callbacks into a
  ! new array (the kept ones, then those that arrived).
  allocate(loads(max(count, 1_c_size_t)))
  do i = 1, int(count)
    loads(i) = max(1_c_int64_t, int(parts(i)%cost, c_int64_t))
  end do
  call check(hetlb_plan_create(b, count, c_loc(loads), plan), 'hetlb_plan_create')
  call check(hetlb_plan_exports(plan, n_exports, index_p, dest_p), 'hetlb_plan_exports')
  call check(hetlb_plan_imports(plan, n_imports, from_p, n_ranks), 'hetlb_plan_imports')
  call c_f_pointer(index_p, export_index, [n_exports])
  packing => parts
  allocate(arrived(max(n_imports, 1_c_size_t)))
  size_fn = c_funloc(particle_size)
  pack_fn = c_funloc(particle_pack)
  unpack_fn = c_funloc(particle_unpack)
  call check(hetlb_migrate(b, plan, size_fn, pack_fn, unpack_fn, c_null_ptr), 'hetlb_migrate')
  allocate(keep(count))
  keep = .true.
  if (n_exports > 0) keep(export_index + 1) = .false.
  kept = count - n_exports
  new_items = hetlb_alloc(max(kept + n_imports, 1_c_size_t) * item_size)
  call c_f_pointer(new_items, moved, [kept + n_imports])
  moved(1:kept) = pack(parts(1:count), keep)
  if (narrived > 0) moved(kept + 1:) = arrived(1:narrived)
  call hetlb_plan_free(plan)
  call hetlb_free(items)
  items = new_items
  count = kept + n_imports
  parts => moved
  call check_ids()
  call MPI_Reduce(int(n_exports), i, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'two-step: ', i, ' particles moved'

  call hetlb_free(items)
  call hetlb_balancer_free(b)
  if (rank == 0) print '(a)', 'particles (Fortran): every particle held exactly once'
  call MPI_Finalize(ierr)

contains

  subroutine check(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    integer :: e
    if (code /= HETLB_OK) then
      print '(a,i0,a,a,a,i0,a,a)', 'rank ', rank, ': ', what, ' failed (', code, '): ', &
          hetlb_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  !> Gathers every id on rank 0 and checks that each of 0..total-1 is there exactly once.
  subroutine check_ids()
    integer :: n, k, e
    integer, allocatable :: counts(:), displs(:)
    integer(c_int64_t), allocatable :: ids(:), all_ids(:)
    logical, allocatable :: seen(:)
    integer :: bad
    n = int(count)
    allocate(counts(nranks), displs(nranks), ids(max(n, 1)))
    call MPI_Gather(n, 1, MPI_INTEGER, counts, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
    do k = 1, n
      ids(k) = parts(k)%id
    end do
    if (rank == 0) then
      displs(1) = 0
      do k = 2, nranks
        displs(k) = displs(k - 1) + counts(k - 1)
      end do
      allocate(all_ids(max(sum(counts), 1)))
    else
      allocate(all_ids(1))
    end if
    call MPI_Gatherv(ids, n, MPI_INTEGER8, all_ids, counts, displs, MPI_INTEGER8, 0, &
                     MPI_COMM_WORLD, e)
    bad = 0
    if (rank == 0) then
      if (sum(counts) /= total) bad = 1
      allocate(seen(0:total - 1))
      seen = .false.
      do k = 1, sum(counts)
        if (all_ids(k) < 0 .or. all_ids(k) >= total) then
          bad = 1
        else if (seen(all_ids(k))) then
          bad = 1
        else
          seen(all_ids(k)) = .true.
        end if
      end do
      if (.not. all(seen)) bad = 1
    end if
    call MPI_Bcast(bad, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
    if (bad /= 0) then
      if (rank == 0) print '(a)', 'particles (Fortran): an id was lost or doubled'
      call MPI_Abort(MPI_COMM_WORLD, 2, e)
    end if
  end subroutine check_ids

end program particles
