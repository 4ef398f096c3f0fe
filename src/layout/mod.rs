//! The physical layouts below the writer: what each kind of node does to its
//! own buffers. Nothing here knows the node tree or the writer.

pub(crate) mod decimal;
pub(crate) mod encoded;
pub(crate) mod fixed;
pub(crate) mod view;
