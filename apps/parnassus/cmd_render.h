/* parnassus render (cmd_render.c): the LV2 plugin hosted offline. Its
 * own header so that the shared options.h need not know about it. */
#ifndef PARNASSUS_CLI_CMD_RENDER_H
#define PARNASSUS_CLI_CMD_RENDER_H

int pn_cmd_render(int argc, char **argv);

#endif
