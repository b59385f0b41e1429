!> hetlb's Fortran interface: a module over the C interface (hetlb.h), with iso_c_binding.
!>
!> Build it with the Fortran wrapper of the MPI the library was built against (MPICH or
!> Open MPI: mpifort.mpich or mpifort.openmpi on Debian, MPIFORT of install.sh):
!>   mpifort -c hetlb.f90          (gives hetlb.mod), then link with -lhetlb
!>
!> Communicators are Fortran handles (`integer`, as `use mpi` gives them); the library
!> converts them with MPI_Comm_f2c. Records handed to hetlb_rebalance live in memory from
!> hetlb_alloc (C's malloc), because the call may realloc them: view them with
!> c_f_pointer(items, array, [count]) after every call. Every function returns 0
!> (HETLB_OK) or a negative HETLB_ERR_* code; hetlb_last_error() says why.
module hetlb
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: HETLB_OK = 0
  integer(c_int), parameter, public :: HETLB_ERR_NULL = -1
  integer(c_int), parameter, public :: HETLB_ERR_INVALID = -2
  integer(c_int), parameter, public :: HETLB_ERR_MISMATCH = -3
  integer(c_int), parameter, public :: HETLB_ERR_PLAN = -4
  integer(c_int), parameter, public :: HETLB_ERR_PEER = -5
  integer(c_int), parameter, public :: HETLB_ERR_IN_DOUBT = -6
  integer(c_int), parameter, public :: HETLB_ERR_NOMEM = -7
  integer(c_int), parameter, public :: HETLB_ERR_MPI = -8
  integer(c_int), parameter, public :: HETLB_ERR_CALLBACK = -9
  integer(c_int), parameter, public :: HETLB_ERR_INTERNAL = -10

  !> What hetlb_rebalance reports (the C struct hetlb_report).
  type, bind(c), public :: hetlb_report
    real(c_double) :: imbalance_before = 0, imbalance_after = 0
    integer(c_int64_t) :: items_sent = 0, items_received = 0, bytes_sent = 0
    real(c_double) :: seconds = 0
    !> With the option coords: how scattered the ranks' regions were before and after the
    !> call (NaN without positions).
    real(c_double) :: spread_before = 0, spread_after = 0
    !> 1 when the ranks checked their loads at this call (0: the trigger skipped it);
    !> 1 when the trigger held the move back.
    integer(c_int32_t) :: checked = 0, held_back = 0
  end type hetlb_report

  public :: hetlb_version, hetlb_last_error, hetlb_balance
  public :: hetlb_balancer_create, hetlb_record, hetlb_rebalance, hetlb_resolve
  public :: hetlb_balancer_free, hetlb_alloc, hetlb_free, hetlb_balancer_rank
  ! The two-step form (C names and arguments; callbacks by c_funloc of bind(c) procedures,
  ! local indices from 0 as in C).
  public :: hetlb_plan_create, hetlb_plan_create_at, hetlb_plan_exports, hetlb_plan_imports, hetlb_migrate
  public :: hetlb_balancer_advise
  public :: hetlb_plan_free

  interface
    function c_strlen(s) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen

    function c_version() bind(c, name='hetlb_version') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_version

    function c_last_error() bind(c, name='hetlb_last_error') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_last_error

    function c_balance(algorithm, topology, n, loads, capacities, final_loads) &
        bind(c, name='hetlb_balance') result(rc)
      import :: c_char, c_ptr, c_size_t, c_int64_t, c_int
      character(kind=c_char), dimension(*), intent(in) :: algorithm
      type(c_ptr), value :: topology, capacities
      integer(c_size_t), value :: n
      integer(c_int64_t), dimension(*), intent(in) :: loads
      integer(c_int64_t), dimension(*), intent(out) :: final_loads
      integer(c_int) :: rc
    end function c_balance

    function c_create_f(comm, rule, options, out) bind(c, name='hetlb_balancer_create_f') result(rc)
      import :: c_char, c_ptr, c_int
      integer(c_int), value :: comm
      character(kind=c_char), dimension(*), intent(in) :: rule
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_create_f

    !> Reports that this rank processed `units` units of work in `seconds`.
    function hetlb_record(b, units, seconds) bind(c, name='hetlb_record') result(rc)
      import :: c_ptr, c_int64_t, c_double, c_int
      type(c_ptr), value :: b
      integer(c_int64_t), value :: units
      real(c_double), value :: seconds
      integer(c_int) :: rc
    end function hetlb_record

    function c_rebalance(b, items, count, item_size, id_offset, load_of, ctx, report) &
        bind(c, name='hetlb_rebalance') result(rc)
      import :: c_ptr, c_size_t, c_funptr, c_int, hetlb_report
      type(c_ptr), value :: b
      type(c_ptr), intent(inout) :: items
      integer(c_size_t), intent(inout) :: count
      integer(c_size_t), value :: item_size, id_offset
      type(c_funptr), value :: load_of
      type(c_ptr), value :: ctx
      type(hetlb_report), intent(inout) :: report
      integer(c_int) :: rc
    end function c_rebalance

    function c_resolve(b, items, count, item_size, id_offset, load_of, ctx) &
        bind(c, name='hetlb_resolve') result(rc)
      import :: c_ptr, c_size_t, c_funptr, c_int
      type(c_ptr), value :: b
      type(c_ptr), intent(inout) :: items
      integer(c_size_t), intent(inout) :: count
      integer(c_size_t), value :: item_size, id_offset
      type(c_funptr), value :: load_of
      type(c_ptr), value :: ctx
      integer(c_int) :: rc
    end function c_resolve

    !> Frees a balancer (collective; before MPI_Finalize).
    subroutine hetlb_balancer_free(b) bind(c, name='hetlb_balancer_free')
      import :: c_ptr
      type(c_ptr), value :: b
    end subroutine hetlb_balancer_free

    !> This rank in the balancer's communicator.
    function hetlb_balancer_rank(b) bind(c, name='hetlb_balancer_rank') result(rank)
      import :: c_ptr, c_int
      type(c_ptr), value :: b
      integer(c_int) :: rank
    end function hetlb_balancer_rank

    !> What hetlb_rebalance would do now, moving nothing (collective); loads: c_loc of n
    !> integer(c_int64_t) values, or c_null_ptr for 1 each. choice: the candidate it would
    !> follow (0-based), or -1; json: c_null_ptr, or c_loc of a c_ptr that receives the advice
    !> as a NUL-terminated string (free it with hetlb_free).
    function hetlb_balancer_advise(b, n, loads, choice, json) &
        bind(c, name='hetlb_balancer_advise') result(rc)
      import :: c_ptr, c_size_t, c_int, c_int64_t
      type(c_ptr), value :: b
      integer(c_size_t), value :: n
      type(c_ptr), value :: loads
      integer(c_int64_t), intent(out) :: choice
      type(c_ptr), value :: json
      integer(c_int) :: rc
    end function hetlb_balancer_advise

    !> Decides where this rank's n items go (collective); loads: c_loc of n integer(c_int64_t)
    !> values, or c_null_ptr for 1 each.
    function hetlb_plan_create(b, n, loads, plan) bind(c, name='hetlb_plan_create') result(rc)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: b
      integer(c_size_t), value :: n
      type(c_ptr), value :: loads
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: rc
    end function hetlb_plan_create

    !> hetlb_plan_create for items with positions: coords is c_loc of n*dim real(c_double)
    !> values, item after item (dim 1 to 3), or c_null_ptr with dim 0.
    function hetlb_plan_create_at(b, n, loads, coords, dim, plan) &
        bind(c, name='hetlb_plan_create_at') result(rc)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: b
      integer(c_size_t), value :: n
      type(c_ptr), value :: loads, coords
      integer(c_size_t), value :: dim
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: rc
    end function hetlb_plan_create_at

    !> The exports: n items leave; local_index and dest_rank point to n values each
    !> (integer(c_size_t) and integer(c_int); view them with c_f_pointer).
    function hetlb_plan_exports(plan, n, local_index, dest_rank) &
        bind(c, name='hetlb_plan_exports') result(rc)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: plan
      integer(c_size_t), intent(out) :: n
      type(c_ptr), intent(out) :: local_index, dest_rank
      integer(c_int) :: rc
    end function hetlb_plan_exports

    !> The imports: n items arrive; from_rank points to `ranks` integer(c_size_t) counts.
    function hetlb_plan_imports(plan, n, from_rank, ranks) &
        bind(c, name='hetlb_plan_imports') result(rc)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: plan
      integer(c_size_t), intent(out) :: n
      type(c_ptr), intent(out) :: from_rank
      integer(c_int), intent(out) :: ranks
      integer(c_int) :: rc
    end function hetlb_plan_imports

    !> Carries out a plan (collective) through the application's callbacks:
    !> size_of(index, ctx) -> integer(c_size_t); pack(index, buf, size, ctx) -> integer(c_int);
    !> unpack(from_rank, buf, size, ctx) -> integer(c_int) (all arguments by value).
    function hetlb_migrate(b, plan, size_of, pack, unpack, ctx) bind(c, name='hetlb_migrate') &
        result(rc)
      import :: c_ptr, c_funptr, c_int
      type(c_ptr), value :: b, plan, ctx
      type(c_funptr), value :: size_of, pack, unpack
      integer(c_int) :: rc
    end function hetlb_migrate

    !> Frees a plan.
    subroutine hetlb_plan_free(plan) bind(c, name='hetlb_plan_free')
      import :: c_ptr
      type(c_ptr), value :: plan
    end subroutine hetlb_plan_free

    !> malloc(bytes): memory for the records of hetlb_rebalance.
    function hetlb_alloc(bytes) bind(c, name='hetlb_alloc') result(p)
      import :: c_ptr, c_size_t
      integer(c_size_t), value :: bytes
      type(c_ptr) :: p
    end function hetlb_alloc

    !> free(p), for memory from hetlb_alloc or hetlb_rebalance.
    subroutine hetlb_free(p) bind(c, name='hetlb_free')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine hetlb_free
  end interface

contains

  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function from_c

  !> The library's version.
  function hetlb_version() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_version())
  end function hetlb_version

  !> This thread's last error message ('' after a success).
  function hetlb_last_error() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_last_error())
  end function hetlb_last_error

  !> Balances loads with `algorithm` (no MPI): final_loads gets the loads after balancing.
  !> `topology` ('' or absent: the hypercube) and `capacities` (absent: equal) are optional.
  function hetlb_balance(algorithm, loads, final_loads, topology, capacities) result(rc)
    character(len=*), intent(in) :: algorithm
    integer(c_int64_t), intent(in) :: loads(:)
    integer(c_int64_t), intent(out) :: final_loads(:)
    character(len=*), intent(in), optional :: topology
    real(c_double), intent(in), optional, target :: capacities(:)
    integer(c_int) :: rc
    character(kind=c_char, len=:), allocatable, target :: topo
    type(c_ptr) :: topo_p, caps_p
    topo_p = c_null_ptr
    caps_p = c_null_ptr
    if (present(topology)) then
      if (len_trim(topology) > 0) then
        topo = trim(topology) // c_null_char
        topo_p = c_loc(topo)
      end if
    end if
    if (present(capacities)) caps_p = c_loc(capacities)
    if (size(final_loads) < size(loads)) then
      rc = HETLB_ERR_INVALID
      return
    end if
    rc = c_balance(trim(algorithm) // c_null_char, topo_p, int(size(loads), c_size_t), loads, &
                   caps_p, final_loads)
  end function hetlb_balance

  !> Creates this rank's balancer on the Fortran communicator `comm` (collective).
  !> `options`: 'key=value;...' as in C (absent or '': every default).
  function hetlb_balancer_create(comm, rule, b, options) result(rc)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: rule
    type(c_ptr), intent(out) :: b
    character(len=*), intent(in), optional :: options
    integer(c_int) :: rc
    character(kind=c_char, len=:), allocatable, target :: opts
    type(c_ptr) :: opts_p
    opts_p = c_null_ptr
    if (present(options)) then
      opts = trim(options) // c_null_char
      opts_p = c_loc(opts)
    end if
    rc = c_create_f(int(comm, c_int), trim(rule) // c_null_char, opts_p, b)
  end function hetlb_balancer_create

  !> Rebalances `count` records of `item_size` bytes at `items` (from hetlb_alloc) with the
  !> other ranks (collective). On return `items` may have moved and `count` changed.
  !> `load_of` (optional): c_funloc of a bind(c) function (record, ctx) returning its load
  !> as integer(c_int64_t); `ctx` is handed to it. `report` (optional) is filled on success.
  function hetlb_rebalance(b, items, count, item_size, id_offset, report, load_of, ctx) result(rc)
    type(c_ptr), intent(in) :: b
    type(c_ptr), intent(inout) :: items
    integer(c_size_t), intent(inout) :: count
    integer(c_size_t), intent(in) :: item_size, id_offset
    type(hetlb_report), intent(inout), optional :: report
    type(c_funptr), intent(in), optional :: load_of
    type(c_ptr), intent(in), optional :: ctx
    integer(c_int) :: rc
    type(hetlb_report) :: r
    type(c_funptr) :: f
    type(c_ptr) :: x
    f = c_null_funptr
    x = c_null_ptr
    if (present(load_of)) f = load_of
    if (present(ctx)) x = ctx
    rc = c_rebalance(b, items, count, item_size, id_offset, f, x, r)
    if (present(report)) report = r
  end function hetlb_rebalance

  !> Settles a call that ended in HETLB_ERR_IN_DOUBT (same arguments as hetlb_rebalance).
  function hetlb_resolve(b, items, count, item_size, id_offset, load_of, ctx) result(rc)
    type(c_ptr), intent(in) :: b
    type(c_ptr), intent(inout) :: items
    integer(c_size_t), intent(inout) :: count
    integer(c_size_t), intent(in) :: item_size, id_offset
    type(c_funptr), intent(in), optional :: load_of
    type(c_ptr), intent(in), optional :: ctx
    integer(c_int) :: rc
    type(c_funptr) :: f
    type(c_ptr) :: x
    f = c_null_funptr
    x = c_null_ptr
    if (present(load_of)) f = load_of
    if (present(ctx)) x = ctx
    rc = c_resolve(b, items, count, item_size, id_offset, f, x)
  end function hetlb_resolve

end module hetlb
