/* The default rule set (presets/chorale-major.json), built into the plugin
 * by plugin/embed.cmake so it plays with no file. */
#ifndef PARNASSUS_PLUGIN_DEFAULT_RULES_H
#define PARNASSUS_PLUGIN_DEFAULT_RULES_H

extern const char pnp_default_rules[];             /* NUL-terminated JSON */
extern const unsigned long pnp_default_rules_size; /* without the NUL */

#endif
