/* The table of ports.def, by port index, and the clamp of input values. */
#include "ports.h"

#include <math.h>
#include <stddef.h>

static const pnp_port_info ports[PNP_NUM_PORTS] = {
#define PNP_PORT(id, index, ...) [id] = {__VA_ARGS__},
#include "ports.def"
};

static const pnp_group_info groups[PNP_NUM_GROUPS] = {
#define PNP_GROUP(id, symbol, label) [id] = {symbol, label},
#include "ports.def"
};

const pnp_port_info *pnp_port_get(pnp_port port)
{
    return (unsigned)port < PNP_NUM_PORTS ? &ports[port] : NULL;
}

const pnp_group_info *pnp_group_get(pnp_port_group group)
{
    if (group == PNP_NO_GROUP || (unsigned)group >= PNP_NUM_GROUPS)
        return NULL;
    return &groups[group];
}

const pnp_range *pnp_port_range(pnp_port port)
{
    const pnp_port_info *p = pnp_port_get(port);
    return p && p->kind == PNP_CONTROL_IN ? &p->range : NULL;
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
