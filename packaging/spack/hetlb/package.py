# Spack recipe for hetlb: the C library with MPI, its header, the Fortran module, pkg-config
# and CMake files (as crates/hetlb-capi/install.sh installs them), and optionally the Python
# package. Use it from a local repository of recipes:
#
#   spack repo create ~/spack-hetlb hetlb          # once (a namespace of your own)
#   cp -r packaging/spack/hetlb ~/spack-hetlb/packages/
#   spack repo add ~/spack-hetlb
#   spack install hetlb@main +fortran +python ^mpich
#
# or from a source tree: spack dev-build hetlb@main +fortran (run in the checkout).

from spack.package import *


class Hetlb(Package):
    """Dynamic load balancing on heterogeneous clusters: exact integer balancing rules
    (dimension exchange on hypercubes, diffusion with node capacities, delay-aware and
    master-worker balancing) embedded in MPI codes through one collective call."""

    homepage = "https://github.com/hetlb/hetlb"
    git = "https://github.com/hetlb/hetlb.git"

    license("MIT OR Apache-2.0")

    version("main", branch="main")

    variant("mpi", default=True, description="Build the MPI functions (hetlb_balancer_*)")
    variant("fortran", default=True, description="Compile the Fortran module and libhetlb_fortran")
    variant("python", default=False, description="Install the Python package (import hetlb)")

    depends_on("rust@1.89:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi", when="+mpi")
    depends_on("llvm", type="build", when="+mpi")  # libclang for the MPI bindings' generator
    depends_on("python@3.9:", type=("build", "run"), when="+python")
    depends_on("py-pip", type="build", when="+python")
    depends_on("py-maturin@1.5:", type="build", when="+python")
    depends_on("py-numpy", type=("build", "run"), when="+python")
    depends_on("py-mpi4py", type=("build", "run"), when="+python+mpi")

    conflicts("+fortran", when="~mpi", msg="the Fortran module needs the MPI functions")

    def setup_build_environment(self, env):
        # Cargo's own caches stay inside the stage; the registry is reached as usual.
        env.set("CARGO_HOME", join_path(self.stage.path, "cargo-home"))
        env.set("CARGO_TARGET_DIR", join_path(self.stage.source_path, "target"))
        if self.spec.satisfies("+mpi"):
            env.set("MPICC", self.spec["mpi"].mpicc)
            if self.spec.satisfies("+fortran"):
                env.set("MPIFORT", self.spec["mpi"].mpifc)
            env.set("LIBCLANG_PATH", self.spec["llvm"].prefix.lib)

    def install(self, spec, prefix):
        if spec.satisfies("+mpi"):
            if spec.satisfies("~fortran"):
                # install.sh compiles the module when MPIFORT is a command: name none.
                env["MPIFORT"] = "no-fortran-compiler"
            bash = which("bash")
            bash("crates/hetlb-capi/install.sh", prefix)
        else:
            cargo = which("cargo")
            cargo("build", "--release", "--locked", "-p", "hetlb-capi")
            mkdirp(prefix.lib, prefix.include)
            install(join_path(env["CARGO_TARGET_DIR"], "release", "libhetlb.so"), prefix.lib)
            install(join_path(env["CARGO_TARGET_DIR"], "release", "libhetlb.a"), prefix.lib)
            install("include/hetlb.h", prefix.include)
        if spec.satisfies("+python"):
            features = "mpi" if spec.satisfies("+mpi") else ""
            env["MATURIN_PEP517_ARGS"] = f"--features {features}" if features else ""
            pip = which(spec["python"].command.path)
            pip("-m", "pip", "install", "--no-deps", "--no-build-isolation",
                f"--prefix={prefix}", "./crates/hetlb-py")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_install(self):
        # The installed pkg-config file names the library.
        pkg_config = which("pkg-config")
        env["PKG_CONFIG_PATH"] = self.prefix.lib.pkgconfig
        if self.spec.satisfies("+mpi"):
            pkg_config("--exists", "hetlb")
