/* The bundle's Turtle, as a host reads it (lilv), says of every port what
 * the plugin's declaration says (plugin/ports.def, compiled in): index,
 * symbol, name, comment, class, range and default (as the floats the
 * plugin clamps to), port properties, designation, unit, group, scale
 * points, atom types and buffer size; and the ports released so far keep
 * their symbols and indices. The bundle comes from PNP_BUNDLE_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/core/lv2.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/port-groups/port-groups.h>
#include <lv2/port-props/port-props.h>
#include <lv2/resize-port/resize-port.h>
#include <lv2/time/time.h>
#include <lv2/units/units.h>

#include "ports.h"
#include "uris.h"

#define RDFS_COMMENT "http://www.w3.org/2000/01/rdf-schema#comment"
#define RDFS_LABEL   "http://www.w3.org/2000/01/rdf-schema#label"

/* Hosts save sessions by symbol: these ports are out, and stay where they
 * are. A new port is appended here and in ports.def. */
static const char *const released[] = {
    "control",
    "midi_out",
    "notify",
    "log2_lambda_w",
    "alpha",
    "sync",
    "bpm",
    "division",
    "gate",
    "velocity",
    "humanize",
    "channel",
    "channel_per_voice",
    "soprano",
    "alto",
    "tenor",
    "bass",
    "key",
    "octave",
    "input_mode",
    "seed",
    "panic",
    "enable",
    "rules_selected",
    "weighted_error",
    "solve_ms",
    "solver_busy",
    "late_steps",
};

static LilvWorld *world;
static const LilvPlugin *plugin;

static LilvNode *uri(const char *s)
{
    return lilv_new_uri(world, s);
}

/* ---- what the declaration means in LV2 terms ---- */

static const char *unit_uri(pnp_unit unit)
{
    switch (unit) {
    case PNP_UNIT_BPM:
        return LV2_UNITS__bpm;
    case PNP_UNIT_PERCENT:
        return LV2_UNITS__pc;
    case PNP_UNIT_OCTAVES:
        return LV2_UNITS__oct;
    case PNP_UNIT_MS:
        return LV2_UNITS__ms;
    case PNP_UNIT_RULES:
        return PNP_PREFIX "unit:rules";
    case PNP_UNIT_STEPS:
        return PNP_PREFIX "unit:steps";
    case PNP_NO_UNIT:
        break;
    }
    return NULL;
}

/* The lv2:portProperty values the port must have, and no others. */
static int expected_properties(const pnp_port_info *p, const char **out)
{
    int n = 0;
    if (p->type == PNP_INTEGER)
        out[n++] = LV2_CORE__integer;
    if (p->type == PNP_TOGGLE)
        out[n++] = LV2_CORE__toggled;
    if (p->properties & PNP_ENUMERATION)
        out[n++] = LV2_CORE__enumeration;
    if (p->properties & PNP_TRIGGER)
        out[n++] = LV2_PORT_PROPS__trigger;
    if (p->properties & PNP_EXPENSIVE)
        out[n++] = LV2_PORT_PROPS__expensive;
    if (p->properties & PNP_NOT_AUTOMATIC)
        out[n++] = LV2_PORT_PROPS__notAutomatic;
    return n;
}

static int expected_supports(const pnp_port_info *p, const char **out)
{
    int n = 0;
    if (p->supports & PNP_SUPPORTS_MIDI)
        out[n++] = LV2_MIDI__MidiEvent;
    if (p->supports & PNP_SUPPORTS_POSITION)
        out[n++] = LV2_TIME__Position;
    if (p->supports & PNP_SUPPORTS_PATCH)
        out[n++] = LV2_PATCH__Message;
    return n;
}

/* ---- reading the bundle ---- */

/* The one value of a port's property as a string; "" when it has none. */
static void port_string(const LilvPort *port, const char *property, char *out, size_t size)
{
    LilvNode *p = uri(property);
    LilvNode *v = lilv_port_get(plugin, port, p);
    snprintf(out, size, "%s", v ? lilv_node_as_string(v) : "");
    lilv_node_free(v);
    lilv_node_free(p);
}

/* The values of a port's property are exactly the URIs `want`. */
static void assert_uris(const pnp_port_info *p, const LilvPort *port, const char *property,
                        const char **want, int n)
{
    LilvNode *prop = uri(property);
    LilvNodes *got = lilv_port_get_value(plugin, port, prop);
    const int count = got ? (int)lilv_nodes_size(got) : 0;
    if (count != n)
        fail_msg("%s: %d values of <%s> in the Turtle, %d declared", p->symbol, count, property, n);
    for (int i = 0; i < n; ++i) {
        LilvNode *w = uri(want[i]);
        if (!lilv_nodes_contains(got, w))
            fail_msg("%s: <%s> is not a <%s> in the Turtle", p->symbol, want[i], property);
        lilv_node_free(w);
    }
    lilv_nodes_free(got);
    lilv_node_free(prop);
}

/* A number of the range: the declared float, written as an integer for
 * integer and toggle ports and as a decimal for real ones. */
static void assert_number(const pnp_port_info *p, const LilvNode *n, float want, const char *what)
{
    if (!n)
        fail_msg("%s: no %s in the Turtle", p->symbol, what);
    const int is_int = lilv_node_is_int(n);
    if (is_int != (p->type != PNP_REAL) || (!is_int && !lilv_node_is_float(n)))
        fail_msg("%s: %s %s is not written as a%s", p->symbol, what, lilv_node_as_string(n),
                 p->type != PNP_REAL ? "n integer" : " decimal");
    if (lilv_node_as_float(n) != want)
        fail_msg("%s: %s %s in the Turtle, %g declared", p->symbol, what, lilv_node_as_string(n),
                 (double)want);
}

static void assert_class(const pnp_port_info *p, const LilvPort *port)
{
    const int input = p->kind == PNP_ATOM_IN || p->kind == PNP_CONTROL_IN;
    const int control = p->kind == PNP_CONTROL_IN || p->kind == PNP_CONTROL_OUT;
    const char *want[] = {input ? LV2_CORE__InputPort : LV2_CORE__OutputPort,
                          control ? LV2_CORE__ControlPort : LV2_ATOM__AtomPort};
    for (int i = 0; i < 2; ++i) {
        LilvNode *c = uri(want[i]);
        if (!lilv_port_is_a(plugin, port, c))
            fail_msg("%s: not a <%s> in the Turtle", p->symbol, want[i]);
        lilv_node_free(c);
    }
    const LilvNodes *classes = lilv_port_get_classes(plugin, port);
    if (lilv_nodes_size(classes) != 2)
        fail_msg("%s: %u classes in the Turtle", p->symbol, lilv_nodes_size(classes));
}

static void assert_range(const pnp_port_info *p, const LilvPort *port)
{
    LilvNode *def = NULL, *min = NULL, *max = NULL;
    lilv_port_get_range(plugin, port, &def, &min, &max);
    assert_number(p, def, p->range.def, "lv2:default");
    assert_number(p, min, p->range.minimum, "lv2:minimum");
    assert_number(p, max, p->range.maximum, "lv2:maximum");
    lilv_node_free(def);
    lilv_node_free(min);
    lilv_node_free(max);
    if (p->kind == PNP_CONTROL_IN) {
        const pnp_range *r = pnp_port_range((pnp_port)lilv_port_get_index(plugin, port));
        assert_non_null(r); /* the range run() holds the port to */
        assert_true(r->def == p->range.def && r->minimum == p->range.minimum &&
                    r->maximum == p->range.maximum);
    }
}

static void assert_scale_points(const pnp_port_info *p, const LilvPort *port)
{
    int n = 0;
    for (const pnp_scale_point *s = p->scale_points; s && s->label; ++s)
        ++n;
    LilvScalePoints *points = lilv_port_get_scale_points(plugin, port);
    const int count = points ? (int)lilv_scale_points_size(points) : 0;
    if (count != n)
        fail_msg("%s: %d scale points in the Turtle, %d declared", p->symbol, count, n);
    for (const pnp_scale_point *s = p->scale_points; s && s->label; ++s) {
        int found = 0;
        LILV_FOREACH(scale_points, i, points)
        {
            const LilvScalePoint *sp = lilv_scale_points_get(points, i);
            found |= !strcmp(lilv_node_as_string(lilv_scale_point_get_label(sp)), s->label) &&
                     lilv_node_as_float(lilv_scale_point_get_value(sp)) == s->value &&
                     lilv_node_is_int(lilv_scale_point_get_value(sp)) == (p->type != PNP_REAL);
        }
        if (!found)
            fail_msg("%s: no scale point %g \"%s\" in the Turtle", p->symbol, (double)s->value,
                     s->label);
    }
    lilv_scale_points_free(points);
}

static void assert_group(const pnp_port_info *p, const LilvPort *port)
{
    const pnp_group_info *g = pnp_group_get(p->group);
    assert_non_null(g);
    char want[256], got[256];
    snprintf(want, sizeof want, PNP_PREFIX "group:%s", g->symbol);
    port_string(port, LV2_PORT_GROUPS__group, got, sizeof got);
    if (strcmp(got, want))
        fail_msg("%s: pg:group <%s> in the Turtle, <%s> declared", p->symbol, got, want);
    LilvNode *group = uri(want), *symbol = uri(LV2_CORE__symbol), *label = uri(RDFS_LABEL);
    LilvNode *s = lilv_world_get(world, group, symbol, NULL);
    LilvNode *l = lilv_world_get(world, group, label, NULL);
    assert_non_null(s);
    assert_non_null(l);
    assert_string_equal(lilv_node_as_string(s), g->symbol);
    assert_string_equal(lilv_node_as_string(l), g->label);
    lilv_node_free(s);
    lilv_node_free(l);
    lilv_node_free(group);
    lilv_node_free(symbol);
    lilv_node_free(label);
}

static void assert_control_port(const pnp_port_info *p, const LilvPort *port)
{
    assert_range(p, port);
    const char *props[8];
    assert_uris(p, port, LV2_CORE__portProperty, props, expected_properties(p, props));
    const char *enabled[] = {LV2_CORE__enabled};
    assert_uris(p, port, LV2_CORE__designation, enabled, p->designation == PNP_DESIGNATION_ENABLED);
    const char *unit[] = {unit_uri(p->unit)};
    assert_uris(p, port, LV2_UNITS__unit, unit, p->unit != PNP_NO_UNIT);
    assert_scale_points(p, port);
}

static void assert_atom_port(const pnp_port_info *p, const LilvPort *port)
{
    const char *types[4];
    assert_uris(p, port, LV2_ATOM__supports, types, expected_supports(p, types));
    const char *sequence[] = {LV2_ATOM__Sequence};
    assert_uris(p, port, LV2_ATOM__bufferType, sequence, 1);
    const char *control[] = {LV2_CORE__control};
    assert_uris(p, port, LV2_CORE__designation, control, p->designation == PNP_DESIGNATION_CONTROL);
    char size[32], want[32] = "";
    if (p->minimum_size)
        snprintf(want, sizeof want, "%u", p->minimum_size);
    port_string(port, LV2_RESIZE_PORT__minimumSize, size, sizeof size);
    assert_string_equal(size, want);
}

/* ---- tests ---- */

static void test_released_ports_stay(void **state)
{
    (void)state;
    const int n = (int)(sizeof released / sizeof released[0]);
    assert_true(PNP_NUM_PORTS >= n);
    for (int i = 0; i < n; ++i) {
        const pnp_port_info *p = pnp_port_get((pnp_port)i);
        assert_non_null(p);
        if (!p->symbol || strcmp(p->symbol, released[i]))
            fail_msg("port %d is \"%s\" in plugin/ports.def, released as \"%s\"", i,
                     p->symbol ? p->symbol : "(none)", released[i]);
    }
    assert_null(pnp_port_get(PNP_NUM_PORTS));
}

static void test_turtle_is_the_declaration(void **state)
{
    (void)state;
    assert_int_equal(lilv_plugin_get_num_ports(plugin), PNP_NUM_PORTS);
    for (uint32_t i = 0; i < PNP_NUM_PORTS; ++i) {
        const pnp_port_info *p = pnp_port_get((pnp_port)i);
        const LilvPort *port = lilv_plugin_get_port_by_index(plugin, i);
        assert_non_null(port);
        assert_string_equal(lilv_node_as_string(lilv_port_get_symbol(plugin, port)), p->symbol);
        LilvNode *name = lilv_port_get_name(plugin, port);
        assert_non_null(name);
        assert_string_equal(lilv_node_as_string(name), p->name);
        lilv_node_free(name);
        char comment[1024];
        port_string(port, RDFS_COMMENT, comment, sizeof comment);
        assert_string_equal(comment, p->comment);
        assert_class(p, port);
        assert_group(p, port);
        if (p->kind == PNP_CONTROL_IN || p->kind == PNP_CONTROL_OUT)
            assert_control_port(p, port);
        else
            assert_atom_port(p, port);
    }
}

/* Hosts read the same defaults: the ones lilv hands out as floats (jalv,
 * Ardour, apps/lv2host) are the plugin's. */
static void test_hosts_read_the_defaults(void **state)
{
    (void)state;
    float min[PNP_NUM_PORTS], max[PNP_NUM_PORTS], def[PNP_NUM_PORTS];
    lilv_plugin_get_port_ranges_float(plugin, min, max, def);
    for (int i = 0; i < PNP_NUM_PORTS; ++i) {
        const pnp_range *r = pnp_port_range((pnp_port)i);
        if (r && (def[i] != r->def || min[i] != r->minimum || max[i] != r->maximum))
            fail_msg("%s: hosts read %g .. %g (%g), the plugin holds to %g .. %g (%g)",
                     pnp_port_get((pnp_port)i)->symbol, (double)min[i], (double)max[i],
                     (double)def[i], (double)r->minimum, (double)r->maximum, (double)r->def);
    }
}

static int load_bundle(void **state)
{
    (void)state;
    const char *dir = getenv("PNP_BUNDLE_DIR");
    if (!dir) {
        fprintf(stderr, "test_plugin_ports: set PNP_BUNDLE_DIR to the built parnassus.lv2\n");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/", dir);
    world = lilv_world_new();
    LilvNode *bundle = lilv_new_file_uri(world, NULL, path);
    lilv_world_load_bundle(world, bundle);
    lilv_node_free(bundle);
    LilvNode *plugin_uri = uri(PNP_URI);
    plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), plugin_uri);
    lilv_node_free(plugin_uri);
    if (!plugin)
        fprintf(stderr, "test_plugin_ports: no plugin <%s> in %s\n", PNP_URI, dir);
    return plugin ? 0 : -1;
}

static int free_world(void **state)
{
    (void)state;
    lilv_world_free(world);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_released_ports_stay),
        cmocka_unit_test(test_turtle_is_the_declaration),
        cmocka_unit_test(test_hosts_read_the_defaults),
    };
    return cmocka_run_group_tests(tests, load_bundle, free_world);
}
