/* `whsim plan`: the Piper planner's command line (plan-cli.c). */
#ifndef WH_PLAN_CLI_H
#define WH_PLAN_CLI_H

/* `whsim plan ...`: argv[0] is "plan". Returns the exit status (2: bad input). */
int wh_piper_plan_main(int argc, char **argv);

#endif
