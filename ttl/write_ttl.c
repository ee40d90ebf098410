/* pnp_write_ttl: writes the bundle's Turtle from a template and the
 * plugin's own declarations, so that what hosts read cannot differ from
 * what the plugin does (ttl/README.md).
 *
 *   pnp_write_ttl TEMPLATE OUTPUT [NAME=VALUE ...]
 *       copies TEMPLATE to OUTPUT with its @NAME@ placeholders filled in:
 *         @PNP_URI@, @PNP_PROJECT_URI@  the URIs of plugin/uris.h
 *         @PNP_PORTS@                   the lv2:port objects of plugin/ports.def
 *         @PNP_GROUPS@                  its port groups
 *         @PNP_UNITS@                   the units of its own that ports use
 *         @NAME@                        a NAME=VALUE of the command line
 *       A placeholder with no value is an error, and so is a port
 *       declaration that makes no sense (a default out of range, ...).
 *   pnp_write_ttl --uri        prints the plugin URI
 *   pnp_write_ttl --symbols    prints the port symbols, one a line, by index
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ports.h"
#include "uris.h"

#define PNP_GROUP_PREFIX PNP_PREFIX "group:"
#define PNP_UNIT_PREFIX  PNP_PREFIX "unit:"

static const char *program = "pnp_write_ttl";

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s%s%s\n", program, what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* ---- checks of the declaration ---- */

static int is_symbol(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (; *s; ++s)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

static int is_control(const pnp_port_info *p)
{
    return p->kind == PNP_CONTROL_IN || p->kind == PNP_CONTROL_OUT;
}

static void check_value(const pnp_port_info *p, float v, const char *what)
{
    if (!isfinite(v) || (p->type != PNP_REAL && rintf(v) != v) ||
        (p->type == PNP_TOGGLE && v != 0.0f && v != 1.0f))
        die(p->symbol, what);
}

static void check_port(const pnp_port_info *p)
{
    const pnp_range *r = &p->range;
    if (!is_control(p)) {
        if (p->type != PNP_REAL || r->minimum != 0.0f || r->maximum != 0.0f || r->def != 0.0f ||
            p->unit || p->properties || p->scale_points ||
            p->designation == PNP_DESIGNATION_ENABLED)
            die(p->symbol, "an atom port cannot have a range, unit, properties or scale points");
        if (!p->supports)
            die(p->symbol, "an atom port supports nothing");
        return;
    }
    if (p->supports || p->minimum_size || p->designation == PNP_DESIGNATION_CONTROL)
        die(p->symbol, "a control port cannot have atom types, a buffer size or lv2:control");
    check_value(p, r->minimum, "the minimum is not a value of the port's type");
    check_value(p, r->maximum, "the maximum is not a value of the port's type");
    check_value(p, r->def, "the default is not a value of the port's type");
    if (!(r->minimum < r->maximum && r->minimum <= r->def && r->def <= r->maximum))
        die(p->symbol, "needs minimum < maximum and minimum <= default <= maximum");
    if ((p->properties & PNP_ENUMERATION) && !p->scale_points)
        die(p->symbol, "an enumeration without scale points");
    for (const pnp_scale_point *s = p->scale_points; s && s->label; ++s) {
        check_value(p, s->value, "a scale point is not a value of the port's type");
        if (s->value < r->minimum || s->value > r->maximum)
            die(p->symbol, "a scale point outside the range");
    }
}

static void check_declaration(void)
{
    for (int i = 0; i < PNP_NUM_PORTS; ++i) {
        const pnp_port_info *p = pnp_port_get((pnp_port)i);
        if (!is_symbol(p->symbol) || !p->name || !p->comment)
            die("plugin/ports.def: a port index without a symbol, name and comment (a gap)", NULL);
        for (int j = 0; j < i; ++j)
            if (!strcmp(p->symbol, pnp_port_get((pnp_port)j)->symbol))
                die(p->symbol, "two ports have this symbol");
        if (!pnp_group_get(p->group))
            die(p->symbol, "no group");
        check_port(p);
    }
    for (int g = PNP_NO_GROUP + 1; g < PNP_NUM_GROUPS; ++g)
        if (!is_symbol(pnp_group_get((pnp_port_group)g)->symbol))
            die("plugin/ports.def: a group's symbol is not a symbol", NULL);
}

/* ---- Turtle ---- */

static void write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* An integer or toggle as an xsd:integer; a real number as the shortest
 * decimal that reads back as the same float, with a decimal point. */
static void write_number(FILE *out, const pnp_port_info *p, float v)
{
    if (p->type != PNP_REAL) {
        fprintf(out, "%ld", lrintf(v));
        return;
    }
    char text[32];
    if (rintf(v) == v && fabsf(v) < 1e15f) {
        snprintf(text, sizeof text, "%.1f", (double)v);
    } else {
        for (int digits = 1; digits <= 9; ++digits) {
            snprintf(text, sizeof text, "%.*g", digits, (double)v);
            if (strtof(text, NULL) == v)
                break;
        }
        if (!strpbrk(text, ".e"))
            strcat(text, ".0");
    }
    fputs(text, out);
}

static const char *unit_term(pnp_unit unit)
{
    switch (unit) {
    case PNP_UNIT_BPM:
        return "units:bpm";
    case PNP_UNIT_PERCENT:
        return "units:pc";
    case PNP_UNIT_OCTAVES:
        return "units:oct";
    case PNP_UNIT_MS:
        return "units:ms";
    case PNP_UNIT_RULES:
        return "<" PNP_UNIT_PREFIX "rules>";
    case PNP_UNIT_STEPS:
        return "<" PNP_UNIT_PREFIX "steps>";
    case PNP_NO_UNIT:
        break;
    }
    return NULL;
}

/* The plugin's own units: counts, shown as "12 rules", "3 steps". */
static void write_units(FILE *out)
{
    static const char *const counted[] = {"rules", "steps"};
    for (size_t i = 0; i < sizeof counted / sizeof counted[0]; ++i) {
        fprintf(out,
                "<" PNP_UNIT_PREFIX "%s>\n"
                "\ta units:Unit ;\n"
                "\trdfs:label \"%s\" ;\n"
                "\tunits:symbol \"%s\" ;\n"
                "\tunits:render \"%%d %s\" .",
                counted[i], counted[i], counted[i], counted[i]);
        if (i + 1 < sizeof counted / sizeof counted[0])
            fputs("\n\n", out);
    }
}

/* Hosts name a group by lv2:name or rdfs:label: both are given. */
static void write_groups(FILE *out)
{
    for (int g = PNP_NO_GROUP + 1; g < PNP_NUM_GROUPS; ++g) {
        const pnp_group_info *group = pnp_group_get((pnp_port_group)g);
        fprintf(out, "<" PNP_GROUP_PREFIX "%s>\n\ta pg:Group ;\n\tlv2:symbol ", group->symbol);
        write_string(out, group->symbol);
        fputs(" ;\n\tlv2:name ", out);
        write_string(out, group->label);
        fputs(" ;\n\trdfs:label ", out);
        write_string(out, group->label);
        fputs(" .", out);
        if (g + 1 < PNP_NUM_GROUPS)
            fputs("\n\n", out);
    }
}

/* Writes a list of objects, "a ,\n<indent>b": the first one after what
 * is already on the line. */
static void write_list(FILE *out, const char *indent, const char *const *items, int n)
{
    for (int i = 0; i < n; ++i)
        fprintf(out, "%s%s%s", i ? " ,\n" : "", i ? indent : "", items[i]);
}

static void write_atom_port(FILE *out, const pnp_port_info *p)
{
    const char *types[3];
    int n = 0;
    if (p->supports & PNP_SUPPORTS_MIDI)
        types[n++] = "midi:MidiEvent";
    if (p->supports & PNP_SUPPORTS_POSITION)
        types[n++] = "time:Position";
    if (p->supports & PNP_SUPPORTS_PATCH)
        types[n++] = "patch:Message";
    fputs(" ;\n\t\tatom:bufferType atom:Sequence ;\n\t\tatom:supports ", out);
    write_list(out, "\t\t\t", types, n);
    if (p->designation == PNP_DESIGNATION_CONTROL)
        fputs(" ;\n\t\tlv2:designation lv2:control", out);
    if (p->minimum_size)
        fprintf(out, " ;\n\t\trsz:minimumSize %u", p->minimum_size);
}

static void write_control_port(FILE *out, const pnp_port_info *p)
{
    fputs(" ;\n\t\tlv2:default ", out);
    write_number(out, p, p->range.def);
    fputs(" ;\n\t\tlv2:minimum ", out);
    write_number(out, p, p->range.minimum);
    fputs(" ;\n\t\tlv2:maximum ", out);
    write_number(out, p, p->range.maximum);

    const char *properties[6];
    int n = 0;
    if (p->type == PNP_INTEGER)
        properties[n++] = "lv2:integer";
    if (p->type == PNP_TOGGLE)
        properties[n++] = "lv2:toggled";
    if (p->properties & PNP_ENUMERATION)
        properties[n++] = "lv2:enumeration";
    if (p->properties & PNP_TRIGGER)
        properties[n++] = "pprops:trigger";
    if (p->properties & PNP_EXPENSIVE)
        properties[n++] = "pprops:expensive";
    if (p->properties & PNP_NOT_AUTOMATIC)
        properties[n++] = "pprops:notAutomatic";
    if (n) {
        fputs(" ;\n\t\tlv2:portProperty ", out);
        write_list(out, "\t\t\t", properties, n);
    }
    if (p->designation == PNP_DESIGNATION_ENABLED)
        fputs(" ;\n\t\tlv2:designation lv2:enabled", out);
    if (p->unit)
        fprintf(out, " ;\n\t\tunits:unit %s", unit_term(p->unit));
    for (const pnp_scale_point *s = p->scale_points; s && s->label; ++s) {
        fputs(s == p->scale_points ? " ;\n\t\tlv2:scalePoint [\n" : " , [\n", out);
        fputs("\t\t\trdfs:label ", out);
        write_string(out, s->label);
        fputs(" ;\n\t\t\trdf:value ", out);
        write_number(out, p, s->value);
        fputs("\n\t\t]", out);
    }
}

/* The objects of the plugin's lv2:port, in index order. */
static void write_ports(FILE *out)
{
    for (int i = 0; i < PNP_NUM_PORTS; ++i) {
        const pnp_port_info *p = pnp_port_get((pnp_port)i);
        const int input = p->kind == PNP_ATOM_IN || p->kind == PNP_CONTROL_IN;
        fprintf(out, "%s[\n\t\ta %s ,\n\t\t\t%s ;\n", i ? " , " : "",
                input ? "lv2:InputPort" : "lv2:OutputPort",
                is_control(p) ? "lv2:ControlPort" : "atom:AtomPort");
        fprintf(out, "\t\tlv2:index %d ;\n\t\tlv2:symbol ", i);
        write_string(out, p->symbol);
        fputs(" ;\n\t\tlv2:name ", out);
        write_string(out, p->name);
        fputs(" ;\n\t\trdfs:comment ", out);
        write_string(out, p->comment);
        if (is_control(p))
            write_control_port(out, p);
        else
            write_atom_port(out, p);
        fprintf(out, " ;\n\t\tpg:group <" PNP_GROUP_PREFIX "%s>\n\t]",
                pnp_group_get(p->group)->symbol);
    }
}

/* ---- the template ---- */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    size_t size = 0, cap = 4096;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + size, 1, cap - size - 1, f)) > 0) {
        size += got;
        if (size + 1 == cap) {
            char *bigger = realloc(text, cap *= 2);
            if (!bigger)
                free(text);
            text = bigger;
        }
    }
    if (!text || ferror(f))
        die("cannot read", path);
    fclose(f);
    text[size] = '\0';
    return text;
}

/* Writes the value of placeholder `name` (length len); 0 when it has none. */
static int write_value(FILE *out, const char *name, size_t len, int argc, char **argv)
{
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
    if (IS("PNP_URI"))
        fputs(PNP_URI, out);
    else if (IS("PNP_PROJECT_URI"))
        fputs(PNP_PROJECT_URI, out);
    else if (IS("PNP_PORTS"))
        write_ports(out);
    else if (IS("PNP_GROUPS"))
        write_groups(out);
    else if (IS("PNP_UNITS"))
        write_units(out);
    else {
        for (int i = 0; i < argc; ++i)
            if (!strncmp(argv[i], name, len) && argv[i][len] == '=') {
                fputs(argv[i] + len + 1, out);
                return 1;
            }
        return 0;
    }
    return 1;
#undef IS
}

/* A placeholder is @NAME@ with NAME of capitals, digits and underscores;
 * any other @ (Turtle's @prefix) is text. */
static size_t placeholder_length(const char *at)
{
    size_t n = 1;
    while ((at[n] >= 'A' && at[n] <= 'Z') || (at[n] >= '0' && at[n] <= '9') || at[n] == '_')
        ++n;
    return n > 1 && at[n] == '@' ? n - 1 : 0;
}

static void write_template(const char *template_path, const char *output_path, int argc,
                           char **argv)
{
    char *text = read_file(template_path);
    FILE *out = fopen(output_path, "wb");
    if (!out)
        die("cannot write", output_path);
    for (const char *c = text; *c; ++c) {
        const size_t len = *c == '@' ? placeholder_length(c) : 0;
        if (!len) {
            fputc(*c, out);
            continue;
        }
        if (!write_value(out, c + 1, len, argc, argv)) {
            fclose(out);
            remove(output_path);
            fprintf(stderr, "%s: %s: @%.*s@ has no value\n", program, template_path, (int)len,
                    c + 1);
            exit(1);
        }
        c += len + 1;
    }
    free(text);
    if (fclose(out) != 0) {
        remove(output_path);
        die("cannot write", output_path);
    }
}

int main(int argc, char **argv)
{
    check_declaration();
    if (argc == 2 && !strcmp(argv[1], "--uri")) {
        puts(PNP_URI);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--symbols")) {
        for (int i = 0; i < PNP_NUM_PORTS; ++i)
            puts(pnp_port_get((pnp_port)i)->symbol);
        return 0;
    }
    if (argc < 3 || argv[1][0] == '-') {
        fprintf(stderr, "usage: %s TEMPLATE OUTPUT [NAME=VALUE ...] | --uri | --symbols\n",
                program);
        return 2;
    }
    write_template(argv[1], argv[2], argc - 3, argv + 3);
    return 0;
}
