//! The rules' properties and equivalences, one test program (one build and one link instead of
//! five): `cargo test -p hetlb-core --test core [MODULE::]` runs all of them or one module's.

mod diffusion_properties;
mod embedding;
mod exchange_equivalence;
mod graph_files;
mod properties;
