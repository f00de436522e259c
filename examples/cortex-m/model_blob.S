/*
 * model_blob.S: links a model's constants blob (bin mode) into the image as its
 * own read-only section, .model_constants, 16-byte aligned.
 * Build with -DMODEL_BIN_FILE='"NAME.bin"' and -Wa,-I,DIR_OF_THE_BIN.
 * (Not ".relayc...": binutils takes any section whose name starts with ".rel"
 * for a relocation section, SHT_REL/SHT_RELA, and the image breaks.)
 */
#ifndef MODEL_BIN_FILE
#error "define MODEL_BIN_FILE as the quoted file name of the blob"
#endif

    .section .model_constants, "a", %progbits
    .balign 16
    .global relayc_constants_start
    .type relayc_constants_start, %object
relayc_constants_start:
    .incbin MODEL_BIN_FILE
    .global relayc_constants_end
relayc_constants_end:
    .size relayc_constants_start, relayc_constants_end - relayc_constants_start
