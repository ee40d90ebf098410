/* The plugin's ports, as C sees them. Each port is declared once, in
 * ports.def: the enum below, the table of ports.c (what run() holds input
 * values to) and the Turtle's port list (ttl/write_ttl.c writes it at build
 * time) all come from there, so they cannot differ. */
#ifndef PARNASSUS_PLUGIN_PORTS_H
#define PARNASSUS_PLUGIN_PORTS_H

/* "sync" values */
enum { PNP_SYNC_HOST = 0, PNP_SYNC_HOST_TEMPO = 1, PNP_SYNC_FREE = 2 };

/* "input_mode" values */
enum { PNP_INPUT_OFF = 0, PNP_INPUT_SOPRANO = 1, PNP_INPUT_BASS = 2 };

/* "division" values: 0 1/1, 1 1/2, 2 1/4, 3 1/8, 4 1/16, 5 dotted 1/2,
 * 6 dotted 1/4, 7 dotted 1/8, 8 triplet 1/2, 9 triplet 1/4, 10 triplet 1/8,
 * 11 triplet 1/16. */
#define PNP_NUM_DIVISIONS 12

/* The ports by index (PNP_CONTROL = 0, PNP_MIDI_OUT, ...). */
typedef enum pnp_port {
#define PNP_PORT(id, index, ...) id = index,
#include "ports.def"
    PNP_NUM_PORTS
} pnp_port;

/* The port groups (pg:Group) the ports are shown in. */
typedef enum pnp_port_group {
    PNP_NO_GROUP = 0,
#define PNP_GROUP(id, symbol, label) id,
#include "ports.def"
    PNP_NUM_GROUPS
} pnp_port_group;

typedef enum pnp_port_kind {
    PNP_ATOM_IN,     /* atom:AtomPort, lv2:InputPort, a sequence */
    PNP_ATOM_OUT,    /* atom:AtomPort, lv2:OutputPort, a sequence */
    PNP_CONTROL_IN,  /* lv2:ControlPort, lv2:InputPort: held to its range */
    PNP_CONTROL_OUT, /* lv2:ControlPort, lv2:OutputPort */
} pnp_port_kind;

/* What a control port's number means; the Turtle writes an integer or a
 * toggle's values without a decimal point. */
typedef enum pnp_value_type {
    PNP_REAL = 0,
    PNP_INTEGER, /* lv2:integer */
    PNP_TOGGLE,  /* lv2:toggled: 0 off, 1 on */
} pnp_value_type;

/* units:unit of a control port. */
typedef enum pnp_unit {
    PNP_NO_UNIT = 0,
    PNP_UNIT_BPM,     /* units:bpm */
    PNP_UNIT_PERCENT, /* units:pc */
    PNP_UNIT_OCTAVES, /* units:oct */
    PNP_UNIT_MS,      /* units:ms */
    PNP_UNIT_RULES,   /* the plugin's own: a count of rules */
    PNP_UNIT_STEPS,   /* the plugin's own: a count of steps */
} pnp_unit;

/* lv2:portProperty, besides lv2:integer and lv2:toggled (pnp_value_type). */
enum {
    PNP_ENUMERATION = 1 << 0,  /* lv2:enumeration: only the scale points */
    PNP_TRIGGER = 1 << 1,      /* pprops:trigger */
    PNP_EXPENSIVE = 1 << 2,    /* pprops:expensive: a change re-solves */
    PNP_NOT_AUTOMATIC = 1 << 3 /* pprops:notAutomatic */
};

/* lv2:designation */
typedef enum pnp_designation {
    PNP_NO_DESIGNATION = 0,
    PNP_DESIGNATION_CONTROL, /* lv2:control: the port hosts send time and patch messages to */
    PNP_DESIGNATION_ENABLED, /* lv2:enabled: the bypass */
} pnp_designation;

/* atom:supports of an atom port */
enum {
    PNP_SUPPORTS_MIDI = 1 << 0,     /* midi:MidiEvent */
    PNP_SUPPORTS_POSITION = 1 << 1, /* time:Position */
    PNP_SUPPORTS_PATCH = 1 << 2     /* patch:Message */
};

typedef struct pnp_range {
    float minimum, maximum, def;
} pnp_range;

typedef struct pnp_scale_point {
    float value;
    const char *label;
} pnp_scale_point;

/* A port's scale points in ports.def, ended by one without a label. */
#define PNP_SCALE(...) ((const pnp_scale_point[]){__VA_ARGS__, {0.0f, NULL}})

/* Everything hosts are told about a port. The fields of a PNP_PORT entry
 * of ports.def. */
typedef struct pnp_port_info {
    const char *symbol;  /* lv2:symbol: stable forever */
    const char *name;    /* lv2:name */
    const char *comment; /* rdfs:comment: what it does, musically */
    pnp_port_kind kind;
    pnp_port_group group;
    /* control ports */
    pnp_value_type type;
    pnp_range range; /* lv2:minimum, lv2:maximum, lv2:default */
    pnp_unit unit;
    unsigned properties; /* PNP_ENUMERATION, ... */
    pnp_designation designation;
    const pnp_scale_point *scale_points; /* PNP_SCALE(...) or NULL */
    /* atom ports */
    unsigned supports;     /* PNP_SUPPORTS_* */
    unsigned minimum_size; /* rsz:minimumSize in bytes, 0 for the host's default */
} pnp_port_info;

typedef struct pnp_group_info {
    const char *symbol; /* lv2:symbol of the pg:Group */
    const char *label;  /* rdfs:label */
} pnp_group_info;

/* A port's declaration; NULL for an index out of range. */
const pnp_port_info *pnp_port_get(pnp_port port);

/* A port group's declaration; NULL for PNP_NO_GROUP and out of range. */
const pnp_group_info *pnp_group_get(pnp_port_group group);

/* The range of an input control port; NULL for the other ports. */
const pnp_range *pnp_port_range(pnp_port port);

/* A value of an input control port held to its range: NaN and infinities
 * become the default, the rest is clamped to minimum .. maximum. Other
 * ports' values come back as they are. */
float pnp_port_sanitize(pnp_port port, float value);

#endif
