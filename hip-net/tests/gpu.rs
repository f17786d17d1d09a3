//! Tests that need a GPU runtime and a device. Without one each prints
//! "skipped: no GPU runtime (<why>)" and returns; on the GPU machine they run for real.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use hip_net::{drop_error_count, load_network_kernels, Backend, DeviceBuffer, Event, HipError, Module, Stream};

mod common;
use common::context;

#[test]
fn upload_download_and_event_timing() {
    let Some(ctx) = context() else { return };
    let drops_before = drop_error_count();
    let (least, greatest) = ctx.stream_priority_range().unwrap();
    assert!(
        greatest <= least,
        "lower number = higher priority: ({least}, {greatest})"
    );
    let stream = Stream::new(&ctx).unwrap();
    assert_eq!(stream.priority(), greatest);

    const N: usize = 64 << 20;
    let buf = DeviceBuffer::alloc(&ctx, N).unwrap();
    assert_eq!(buf.len(), N);
    assert_ne!(buf.ptr().0, 0);
    let data: Vec<u8> = (0..N).map(|i| (i * 7 + (i >> 13)) as u8).collect();
    buf.upload(&data).unwrap();
    let mut back = vec![0u8; N];
    buf.download(&mut back).unwrap();
    assert!(back == data, "blocking round trip differs");

    let data2: Vec<u8> = data.iter().map(|b| b ^ 0xa5).collect();
    buf.upload_on(&stream, &data2).unwrap();
    back.fill(0);
    buf.download_on(&stream, &mut back).unwrap();
    assert!(back == data2, "stream-ordered round trip differs");

    // Too large a copy is refused before any call.
    let err = buf.upload(&vec![0u8; N + 1]).unwrap_err();
    assert_eq!(
        err,
        HipError::Size {
            what: "upload",
            got: N + 1,
            capacity: N
        }
    );

    // GPU time of four 64 MiB fills between two events.
    let (start, end) = (Event::new(&ctx).unwrap(), Event::new(&ctx).unwrap());
    start.record(&stream).unwrap();
    for b in [1u8, 2, 3, 0x5a] {
        buf.fill_on(&stream, b).unwrap();
    }
    end.record(&stream).unwrap();
    let ms = Event::elapsed_ms(&start, &end).unwrap();
    println!("4 fills of 64 MiB: {ms:.3} ms");
    assert!(ms > 0.0 && ms < 1000.0, "{ms} ms");
    buf.download_on(&stream, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 0x5a), "fill not seen");

    drop((buf, start, end, stream));
    assert_eq!(
        drop_error_count(),
        drops_before,
        "{:?}",
        hip_net::take_drop_errors()
    );
}

/// A hand-written PTX kernel: data[i] += 1 for i < n.
const ADD_ONE_PTX: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry add_one(
    .param .u64 add_one_data,
    .param .u32 add_one_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [add_one_data];
    ld.param.u32 %r2, [add_one_n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.s32 %r7, %r6, 1;
    st.global.u32 [%rd4], %r7;
DONE:
    ret;
}
"#;

unsafe extern "C" fn bump(user: *mut c_void) {
    (*(user as *const AtomicU32)).fetch_add(1, Ordering::SeqCst);
}

#[test]
fn kernel_launch_graph_marker_wait_and_host_function() {
    let Some(ctx) = context() else { return };
    if ctx.runtime().backend() != Backend::Cuda {
        println!("skipped: the test kernel is PTX and the runtime is HIP");
        return;
    }
    let drops_before = drop_error_count();
    let stream = Stream::new(&ctx).unwrap();
    let module = Module::load(&ctx, ADD_ONE_PTX.as_bytes()).unwrap();
    let f = module.function("add_one").unwrap();
    let err = module.function("add_two").err().expect("no such kernel");
    let text = err.to_string();
    assert!(
        text.starts_with("kernel add_two missing from the module for sm_"),
        "{text}"
    );
    assert!(text.contains("CUDA_ERROR_NOT_FOUND"), "{text}");

    let n: u32 = 1 << 20;
    let host: Vec<u32> = (0..n).collect();
    let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buf = DeviceBuffer::alloc(&ctx, n as usize * 4).unwrap();
    buf.upload(&bytes(&host)).unwrap();
    let mut ptr = buf.ptr().0;
    let mut count = n;
    let grid = (n.div_ceil(256), 1, 1);
    let launch = |s: &Stream, ptr: &mut u64, count: &mut u32| unsafe {
        let mut params = [
            ptr as *mut u64 as *mut c_void,
            count as *mut u32 as *mut c_void,
        ];
        f.launch(s, grid, (256, 1, 1), 0, &mut params)
    };
    launch(&stream, &mut ptr, &mut count).unwrap();
    let graph = stream.capture(|s| launch(s, &mut ptr, &mut count)).unwrap();
    for _ in 0..3 {
        graph.launch(&stream).unwrap();
    }
    // An error inside the capture is returned and the stream stays usable.
    let bad = stream.capture(|_| {
        Err(HipError::NoCodeObject {
            arch: "test".into(),
        })
    });
    assert_eq!(
        bad.err(),
        Some(HipError::NoCodeObject {
            arch: "test".into()
        })
    );

    // The marker tier's pieces: a wait already satisfied, then a host function.
    let marker = DeviceBuffer::alloc(&ctx, 8).unwrap();
    marker.upload(&7u64.to_le_bytes()).unwrap();
    let calls = Box::new(AtomicU32::new(0));
    unsafe {
        stream.wait_value64(marker.ptr(), 7).unwrap();
        stream
            .launch_host_func(bump, &*calls as *const AtomicU32 as *mut c_void)
            .unwrap();
    }
    let mut back = vec![0u8; n as usize * 4];
    buf.download_on(&stream, &mut back).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let got: Vec<u32> = back
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let bad: Vec<usize> = (0..n as usize)
        .filter(|&i| got[i] != i as u32 + 4)
        .take(5)
        .collect();
    assert!(
        bad.is_empty(),
        "one direct launch + 3 graph launches: wrong at {bad:?}"
    );

    drop((graph, f, module, buf, marker, stream));
    assert_eq!(
        drop_error_count(),
        drops_before,
        "{:?}",
        hip_net::take_drop_errors()
    );
}

#[test]
fn the_network_kernels_load_on_the_device() {
    let Some(ctx) = context() else { return };
    let (module, functions, target) = load_network_kernels(&ctx).unwrap();
    let names: Vec<&str> = functions.iter().map(|f| f.name()).collect();
    assert_eq!(names, tessel_kernels::kernels_for(target));
    println!("{}: {names:?}", module.label());
}
