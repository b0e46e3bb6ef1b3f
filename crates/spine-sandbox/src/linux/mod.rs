//! The Linux implementation of each layer, and [`confine`](confine::confine) putting them
//! together. Nothing here is `unsafe`: the namespaces, mounts and prctls go through `nix`
//! and `rustix`, Landlock through `landlock`, seccomp through `seccompiler`.

pub(crate) mod bpf;
pub(crate) mod bridge;
pub(crate) mod confine;
pub(crate) mod mounts;
pub(crate) mod netns;
pub(crate) mod ruleset;
pub(crate) mod seccomp;
pub(crate) mod userns;
