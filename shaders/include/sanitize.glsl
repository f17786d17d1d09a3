// Input sanitising (docs/NETWORK.md §1.1): NaN -> 0, then a clamp. `changed` counts replacements.
float sanitize(float x, float lo, float hi, inout uint changed) {
    float y = isnan(x) ? 0.0 : clamp(x, lo, hi);
    if (isnan(x) || y != x) changed++;
    return y;
}
const float COLOR_MAX = 65504.0;
const float MOTION_MAX = 16384.0;
