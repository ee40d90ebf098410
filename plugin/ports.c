/* The input control ports' ranges (ports.h). */
#include "ports.h"

#include <math.h>
#include <stddef.h>

static const struct {
    int control_in;
    pnp_range range;
} ports[PNP_NUM_PORTS] = {
#define PNP_RANGE(port, lo, hi, def) [port] = {1, {(float)(lo), (float)(hi), (float)(def)}},
    PNP_CONTROL_RANGES(PNP_RANGE)
#undef PNP_RANGE
};

const pnp_range *pnp_port_range(pnp_port port)
{
    if ((unsigned)port >= PNP_NUM_PORTS || !ports[port].control_in)
        return NULL;
    return &ports[port].range;
}

float pnp_port_sanitize(pnp_port port, float value)
{
    const pnp_range *r = pnp_port_range(port);
    if (!r)
        return value;
    if (!isfinite(value))
        return r->def;
    return value < r->minimum ? r->minimum : value > r->maximum ? r->maximum : value;
}
