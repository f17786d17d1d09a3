//! What the GPU tests of hip-net share.

use std::sync::Arc;

use hip_net::{Context, Prefer, Runtime};

/// The context on the first device, found through its UUID as the Vulkan side will; None (after
/// saying why) when there is no runtime or no device.
pub fn context() -> Option<Arc<Context>> {
    let rt = match Runtime::open(Prefer::Auto) {
        Ok(rt) => rt,
        Err(e) => {
            println!("skipped: no GPU runtime ({e})");
            return None;
        }
    };
    let devices = rt.devices().expect("devices of an opened runtime");
    let Some(first) = devices.first() else {
        println!("skipped: no GPU runtime ({} sees no device)", rt.describe());
        return None;
    };
    println!("{}: {:?}", rt.describe(), devices);
    let ctx = Context::new(&rt, first.uuid).expect("context on the device with that UUID");
    assert_eq!(ctx.device(), first);
    Some(ctx)
}

