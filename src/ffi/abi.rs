//! The one Rust mirror of the Arrow C Data and C Stream Interface structs
//! (`struct ArrowSchema`, `struct ArrowArray`, `struct ArrowArrayStream`, as
//! declared in include/quiver.h and the Arrow specification).
//!
//! arrow-rs has its own definitions (`FFI_ArrowSchema`, `FFI_ArrowArray`,
//! `FFI_ArrowArrayStream`) with private fields; quiver reads and writes the
//! fields of structs it is handed (to check them before arrow does) and of
//! the structs it exports, so it needs them by name. Every read of a C
//! struct field in the crate goes through these types, never through pointer
//! offsets, so the layout follows the target (pointers are 4 bytes on 32-bit
//! targets). The `const` assertions below hold the mirrors to arrow-rs's
//! definitions, size and alignment, on every target the crate builds for,
//! which is what makes the pointer casts of [`ArrowSchema::from_ffi`] and
//! friends sound.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{align_of, size_of};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;

/// `struct ArrowSchema` of the C Data Interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

/// `struct ArrowArray` of the C Data Interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

/// `struct ArrowArrayStream` of the C Stream Interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    pub get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    pub get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

const _: () = {
    assert!(size_of::<ArrowSchema>() == size_of::<FFI_ArrowSchema>());
    assert!(align_of::<ArrowSchema>() == align_of::<FFI_ArrowSchema>());
    assert!(size_of::<ArrowArray>() == size_of::<FFI_ArrowArray>());
    assert!(align_of::<ArrowArray>() == align_of::<FFI_ArrowArray>());
    assert!(size_of::<ArrowArrayStream>() == size_of::<FFI_ArrowArrayStream>());
    assert!(align_of::<ArrowArrayStream>() == align_of::<FFI_ArrowArrayStream>());
};

// On 64-bit targets every field is 8 bytes, with no padding.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<ArrowSchema>() == 72);
    assert!(size_of::<ArrowArray>() == 80);
    assert!(size_of::<ArrowArrayStream>() == 40);
    assert!(std::mem::offset_of!(ArrowSchema, release) == 56);
    assert!(std::mem::offset_of!(ArrowArray, children) == 48);
    assert!(std::mem::offset_of!(ArrowArray, release) == 64);
    assert!(std::mem::offset_of!(ArrowArrayStream, release) == 24);
};

impl ArrowSchema {
    /// The mirror of arrow-rs's struct at the same address.
    pub fn from_ffi(schema: *const FFI_ArrowSchema) -> *const ArrowSchema {
        schema.cast()
    }
}

impl ArrowArray {
    /// The mirror of arrow-rs's struct at the same address.
    pub fn from_ffi(array: *const FFI_ArrowArray) -> *const ArrowArray {
        array.cast()
    }

    /// The mirror of arrow-rs's struct at the same address, for writing.
    pub fn from_ffi_mut(array: *mut FFI_ArrowArray) -> *mut ArrowArray {
        array.cast()
    }

    /// The same struct as arrow-rs's type (a move: `release` comes along).
    pub fn into_ffi(self) -> FFI_ArrowArray {
        // SAFETY: both types are #[repr(C)] mirrors of `struct ArrowArray`
        // with the same size and alignment (asserted above) and the same
        // fields in the same order; every bit pattern of one is the other.
        unsafe { std::mem::transmute::<ArrowArray, FFI_ArrowArray>(self) }
    }
}

impl ArrowArrayStream {
    /// The same struct as arrow-rs's type (a move: `release` comes along).
    pub fn into_ffi(self) -> FFI_ArrowArrayStream {
        // SAFETY: as in ArrowArray::into_ffi, for `struct ArrowArrayStream`.
        unsafe { std::mem::transmute::<ArrowArrayStream, FFI_ArrowArrayStream>(self) }
    }
}
