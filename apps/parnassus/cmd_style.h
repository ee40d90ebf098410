/* The style commands of the parnassus tool: evaluate (style statistics
 * against a reference), baseline (a Markov-chain yardstick) and sweep (the
 * style of generated music over a knob's range), see docs/evaluate.md. */
#ifndef PARNASSUS_CLI_CMD_STYLE_H
#define PARNASSUS_CLI_CMD_STYLE_H

/* argv holds the words after the subcommand's name. */
int pn_cmd_evaluate(int argc, char **argv);
int pn_cmd_baseline(int argc, char **argv);
int pn_cmd_sweep(int argc, char **argv);

#endif
