/* The plugin's own URIs (the LV2 ones come from the LV2 headers). */
#ifndef PARNASSUS_PLUGIN_URIS_H
#define PARNASSUS_PLUGIN_URIS_H

#define PNP_URI "urn:parnassus:lv2"
#define PNP_PREFIX PNP_URI ":"

/* patch parameter and state key: the rule set (atom:Path) */
#define PNP__ruleSet PNP_PREFIX "ruleSet"
/* state key: the rule set's JSON text, so a session is self-contained */
#define PNP__ruleSetText PNP_PREFIX "ruleSetText"
/* read-only patch parameter: the names of the rules the current
 * realization keeps (atom:String), sent on the notify port when it changes */
#define PNP__selectedRules PNP_PREFIX "selectedRules"
/* state key: the seed the generator was started from (atom:Long) */
#define PNP__seedUsed PNP_PREFIX "seedUsed"

#endif
