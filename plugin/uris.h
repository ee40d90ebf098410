/* The plugin's own URIs (the LV2 ones come from the LV2 headers): the one
 * place they are written. The plugin, the command line, the live app, the
 * bench and the tests include this header, and the build writes them into
 * the bundle's Turtle (ttl/write_ttl.c). */
#ifndef PARNASSUS_PLUGIN_URIS_H
#define PARNASSUS_PLUGIN_URIS_H

/* the plugin */
#define PNP_URI "urn:parnassus:lv2"
/* the plugin's properties, presets, port groups and units: PNP_URI ":name" */
#define PNP_PREFIX PNP_URI ":"
/* the project (doap:Project) the plugin belongs to */
#define PNP_PROJECT_URI "urn:parnassus"

/* patch parameter and state key: the rule set (atom:Path) */
#define PNP__ruleSet PNP_PREFIX "ruleSet"
/* state key: the rule set's JSON text, so a session is self-contained */
#define PNP__ruleSetText PNP_PREFIX "ruleSetText"
/* read-only patch parameter: the names of the rules the current
 * realization keeps (atom:String), sent on the notify port when it changes */
#define PNP__selectedRules PNP_PREFIX "selectedRules"
/* state key: the seed the generator was started from (atom:Long) */
#define PNP__seedUsed PNP_PREFIX "seedUsed"

/* the presets of ttl/presets.ttl.in: PNP_PRESET_PREFIX "strict", ... */
#define PNP_PRESET_PREFIX PNP_PREFIX "preset:"

#endif
