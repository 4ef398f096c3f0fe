//! Exporting array data over the C Data Interface.
//!
//! Each exported `ArrowArray` (the batch and every child, separately) owns
//! references on the buffers of its own level; `release` drops them, which is
//! what lets the writer reclaim a buffer. Children are separate allocations
//! with their own `release`, so a consumer may move a child out and release
//! it before or after its parent, on any thread.
//!
//! Why not arrow-rs's exporter (`FFI_ArrowArray::new`): quiver counts every
//! exported struct, each child and dictionary on its own, until its own
//! `release` runs (`quiver_live_arrays`, [`live_arrays`] and
//! [`live_arrays_of_this_thread`]; the C, Python and JVM tests count the
//! arrays of a batch and of a moved-out child with it). arrow-rs's children
//! carry arrow-rs's `release`, which has no hook for that count, so this
//! module builds the structs itself, the same way arrow-rs does (validity
//! re-aligned to the array's offset, variadic buffer sizes of view types, a
//! released-array `null_count` of `length` for the null type) except that a
//! validity bitmap with no null in it is exported as NULL. The private data of
//! each struct holds that level's buffers only, never the subtree.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use arrow_buffer::{Buffer, MutableBuffer};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::{layout, ArrayData};
use arrow_schema::DataType;

use crate::ffi::abi::ArrowArray;

static LIVE_ARRAYS: AtomicI64 = AtomicI64::new(0);

thread_local! {
    /// The count of the arrays exported by this thread; each exported array
    /// holds a handle on it, so its release (on whatever thread) counts here.
    static EXPORTED_HERE: Arc<AtomicI64> = Arc::new(AtomicI64::new(0));
}

/// Exported `ArrowArray` structs (batches and each of their children and
/// dictionaries) whose `release` has not run yet, in this process.
pub fn live_arrays() -> i64 {
    LIVE_ARRAYS.load(Ordering::SeqCst)
}

/// The part of [`live_arrays`] exported by calls made on this thread
/// (`export_array`, `quiver_writer_finish`, a stream's `get_next`), wherever
/// their `release` runs. Threads that check what they exported themselves
/// (e.g. tests running in parallel) read this instead of the process-wide
/// figure.
pub fn live_arrays_of_this_thread() -> i64 {
    EXPORTED_HERE.try_with(|count| count.load(Ordering::SeqCst)).unwrap_or(0)
}

/// What one exported struct owns: its level's buffers, the pointer arrays
/// the struct points into, and its children and dictionary structs.
struct Private {
    /// Keeps this level's buffers alive until release: validity (re-aligned
    /// if need be), the data buffers, the variadic sizes of view types.
    _buffers: Vec<Buffer>,
    buffer_ptrs: Box<[*const c_void]>,
    children: Box<[*mut ArrowArray]>,
    dictionary: *mut ArrowArray,
    /// The exporting thread's count.
    exported_on: Arc<AtomicI64>,
}

/// Exports `data` as an `ArrowArray` the consumer must release.
pub fn export_array(data: ArrayData) -> FFI_ArrowArray {
    // A thread whose locals are being destroyed counts on a count of its own.
    let exported_on = EXPORTED_HERE.try_with(Arc::clone).unwrap_or_default();
    export_level(&data, &exported_on).into_ffi()
}

fn export_level(data: &ArrayData, exported_on: &Arc<AtomicI64>) -> ArrowArray {
    let spec = layout(data.data_type());
    let mut buffers = Vec::with_capacity(data.buffers().len() + 2);
    let mut buffer_ptrs: Vec<*const c_void> = Vec::with_capacity(data.buffers().len() + 2);
    if spec.can_contain_null_mask {
        let ptr = match data.nulls().filter(|n| n.null_count() > 0) {
            None => std::ptr::null(),
            Some(nulls) if nulls.offset() == data.offset() => {
                buffers.push(nulls.buffer().clone());
                nulls.buffer().as_ptr().cast()
            }
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
                buffers.push(b);
                ptr
            }
        };
        buffer_ptrs.push(ptr);
    }
    for b in data.buffers() {
        buffer_ptrs.push(b.as_ptr().cast());
        buffers.push(b.clone());
    }
    if spec.variadic {
        let sizes: Vec<i64> = data.buffers().iter().skip(1).map(|b| b.len() as i64).collect();
        let b = Buffer::from_vec(sizes);
        buffer_ptrs.push(b.as_ptr().cast());
        buffers.push(b);
    }
    let boxed = |child: &ArrayData| Box::into_raw(Box::new(export_level(child, exported_on)));
    let (children, dictionary): (Box<[*mut ArrowArray]>, *mut ArrowArray) = match data.data_type() {
        DataType::Dictionary(..) => (Box::new([]), boxed(&data.child_data()[0])),
        _ => (data.child_data().iter().map(boxed).collect(), std::ptr::null_mut()),
    };
    let null_count = match data.data_type() {
        DataType::Null => data.len(),
        _ => data.null_count(),
    };
    let mut private = Box::new(Private {
        _buffers: buffers,
        buffer_ptrs: buffer_ptrs.into_boxed_slice(),
        children,
        dictionary,
        exported_on: Arc::clone(exported_on),
    });
    LIVE_ARRAYS.fetch_add(1, Ordering::SeqCst);
    exported_on.fetch_add(1, Ordering::SeqCst);
    ArrowArray {
        length: data.len() as i64,
        null_count: null_count as i64,
        offset: data.offset() as i64,
        n_buffers: private.buffer_ptrs.len() as i64,
        n_children: private.children.len() as i64,
        buffers: private.buffer_ptrs.as_mut_ptr(),
        children: private.children.as_mut_ptr(),
        dictionary: private.dictionary,
        release: Some(release_array),
        private_data: Box::into_raw(private).cast(),
    }
}

/// The `release` callback of every exported array: frees what this struct
/// owns, releases the children and dictionary still in place (a child moved
/// out has `release == NULL` here and is released by its new owner).
unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    crate::ffi::boundary::enter("release", || {
        // SAFETY: the consumer passes NULL or a struct this module exported
        // (possibly moved, i.e. bitwise copied), not yet released.
        let Some(array) = (unsafe { array.as_mut() }) else { return Ok(()) };
        if array.release.is_none() {
            return Ok(());
        }
        // SAFETY: private_data is the Box made by export_level, taken once:
        // release is set to None below.
        let private = unsafe { Box::from_raw(array.private_data.cast::<Private>()) };
        for &child in private.children.iter() {
            // SAFETY: made by Box::into_raw in export_level, freed only here.
            unsafe { release_owned(child) };
        }
        if !private.dictionary.is_null() {
            // SAFETY: as for the children.
            unsafe { release_owned(private.dictionary) };
        }
        array.release = None;
        array.private_data = std::ptr::null_mut();
        private.exported_on.fetch_sub(1, Ordering::SeqCst);
        LIVE_ARRAYS.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    })
}

/// Releases (if still in place) and frees a child struct made by export_level.
///
/// # Safety
/// `child` came from `Box::into_raw` in `export_level` and is freed once, by
/// its parent's release.
unsafe fn release_owned(child: *mut ArrowArray) {
    // SAFETY: per the contract; a child still in place has our release (or
    // NULL once moved out and marked released by the consumer).
    unsafe {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
}
