/* A program that uses the C library relayc emits for lenet.json: draws a "7",
 * runs the model and prints the class probabilities. See run.sh. */
#include <stdio.h>

#include "lenet.h"

int main(void)
{
    static float image[LENET_INPUT0_SIZE];
    static float probs[LENET_OUTPUT0_SIZE];
    /* the caller owns the workspace: static here, a stack or arena buffer elsewhere */
    static lenet_workspace workspace; /* LENET_WORKSPACE_SIZE bytes, LENET_WORKSPACE_ALIGN-aligned */
    int r, c, best = 0;
    for (c = 6; c < 22; c++)
        image[6 * 28 + c] = 1.0f;
    for (r = 7; r < 23; r++)
        image[r * 28 + 21 - (r - 7) / 2] = 1.0f;
    if (lenet_run(image, probs, workspace.bytes) != LENET_OK) {
        fprintf(stderr, "lenet_run failed\n");
        return 1;
    }
    for (c = 0; c < LENET_OUTPUT0_SIZE; c++) {
        printf("class %d: %.4f\n", c, probs[c]);
        if (probs[c] > probs[best])
            best = c;
    }
    printf("best: %d (workspace %d bytes)\n", best, LENET_WORKSPACE_SIZE);
    return 0;
}
