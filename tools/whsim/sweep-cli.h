/* `whsim sweep`: the command line of sweeps (sweep-cli.c). */
#ifndef WH_SWEEP_CLI_H
#define WH_SWEEP_CLI_H

/* `whsim sweep ...`: argv[0] is "sweep". Returns the exit status (2: bad input). */
int wh_sweep_main(int argc, char **argv);

#endif
