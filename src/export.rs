//! Exporting array data over the C Data Interface.
//!
//! Each exported `ArrowArray` (the batch and every child, separately) owns a
//! clone of its `ArrayData`, which holds references on the buffers; `release`
//! drops it, which is what lets the writer reclaim a buffer. Children are
//! separate allocations with their own `release`, so a consumer may move a
//! child out and release it before or after its parent, on any thread.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, Ordering};

use arrow_buffer::{Buffer, MutableBuffer};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::{layout, ArrayData};
use arrow_schema::DataType;

static LIVE_ARRAYS: AtomicI64 = AtomicI64::new(0);

/// Exported `ArrowArray` structs (batches and each of their children) whose
/// `release` has not run yet, in this process.
pub fn live_arrays() -> i64 {
    LIVE_ARRAYS.load(Ordering::SeqCst)
}

/// Same layout as the C Data Interface's `struct ArrowArray` (and arrow's
/// `FFI_ArrowArray`).
#[repr(C)]
struct RawArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut RawArray,
    dictionary: *mut RawArray,
    release: Option<unsafe extern "C" fn(*mut RawArray)>,
    private_data: *mut c_void,
}

struct Private {
    /// Keeps every buffer of this array alive until release.
    _data: ArrayData,
    /// Buffers made for export (a re-aligned validity bitmap, the variadic
    /// sizes of view types).
    _extra: Vec<Buffer>,
    buffers: Box<[*const c_void]>,
    children: Box<[*mut RawArray]>,
    dictionary: *mut RawArray,
}

/// Exports `data` as an `ArrowArray` the consumer must release.
pub fn export_array(data: ArrayData) -> FFI_ArrowArray {
    let raw = export_raw(data);
    // SAFETY: RawArray is #[repr(C)] with exactly the fields, in order and
    // types, of the C Data Interface struct that FFI_ArrowArray also mirrors.
    unsafe { std::mem::transmute::<RawArray, FFI_ArrowArray>(raw) }
}

fn export_raw(data: ArrayData) -> RawArray {
    let spec = layout(data.data_type());
    let mut extra = Vec::new();
    let mut buffers: Vec<*const c_void> = Vec::new();
    if spec.can_contain_null_mask {
        let ptr = match data.nulls().filter(|n| n.null_count() > 0) {
            None => std::ptr::null(),
            Some(nulls) if nulls.offset() == data.offset() => nulls.buffer().as_ptr().cast(),
            Some(nulls) => {
                let mut bits = MutableBuffer::new_null(data.offset() + nulls.len());
                arrow_buffer::bit_mask::set_bits(
                    bits.as_slice_mut(),
                    nulls.validity(),
                    data.offset(),
                    nulls.offset(),
                    nulls.len(),
                );
                let b: Buffer = bits.into();
                let ptr = b.as_ptr().cast();
                extra.push(b);
                ptr
            }
        };
        buffers.push(ptr);
    }
    buffers.extend(data.buffers().iter().map(|b| b.as_ptr().cast::<c_void>()));
    if spec.variadic {
        let sizes: Vec<i64> = data.buffers().iter().skip(1).map(|b| b.len() as i64).collect();
        let b = Buffer::from_vec(sizes);
        buffers.push(b.as_ptr().cast());
        extra.push(b);
    }
    let (children, dictionary): (Vec<ArrayData>, Option<ArrayData>) = match data.data_type() {
        DataType::Dictionary(..) => (Vec::new(), Some(data.child_data()[0].clone())),
        _ => (data.child_data().to_vec(), None),
    };
    let children: Box<[*mut RawArray]> = children.into_iter().map(|c| Box::into_raw(Box::new(export_raw(c)))).collect();
    let dictionary = dictionary.map_or(std::ptr::null_mut(), |d| Box::into_raw(Box::new(export_raw(d))));
    let null_count = match data.data_type() {
        DataType::Null => data.len(),
        _ => data.null_count(),
    };
    let mut private =
        Box::new(Private { buffers: buffers.into_boxed_slice(), children, dictionary, _extra: extra, _data: data });
    LIVE_ARRAYS.fetch_add(1, Ordering::SeqCst);
    RawArray {
        length: private._data.len() as i64,
        null_count: null_count as i64,
        offset: private._data.offset() as i64,
        n_buffers: private.buffers.len() as i64,
        n_children: private.children.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: private.children.as_mut_ptr(),
        dictionary: private.dictionary,
        release: Some(release_array),
        private_data: Box::into_raw(private).cast(),
    }
}

/// The `release` callback of every exported array: frees what this struct
/// owns, releases the children and dictionary still in place (a child moved
/// out has `release == NULL` here and is released by its new owner).
unsafe extern "C" fn release_array(array: *mut RawArray) {
    // SAFETY: the consumer passes a struct this module exported (possibly
    // moved, i.e. bitwise copied); its private_data is the Box made above.
    unsafe {
        if array.is_null() || (*array).release.is_none() {
            return;
        }
        let private = Box::from_raw((*array).private_data.cast::<Private>());
        for &child in private.children.iter() {
            release_owned(child);
        }
        if !private.dictionary.is_null() {
            release_owned(private.dictionary);
        }
        drop(private);
        (*array).release = None;
        (*array).private_data = std::ptr::null_mut();
    }
    LIVE_ARRAYS.fetch_sub(1, Ordering::SeqCst);
}

/// Releases (if still in place) and frees a child struct allocated by export_raw.
unsafe fn release_owned(child: *mut RawArray) {
    // SAFETY: `child` came from Box::into_raw in export_raw and is freed once,
    // by its parent's release.
    unsafe {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
}
