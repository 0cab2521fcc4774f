/* A tiny assertion header for the C tests: CHECK keeps going and counts failures; REQUIRE stops the test. */
#ifndef TFC_TEST_H
#define TFC_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/tfc.h"

static int tfc_test_failures;
static int tfc_test_checks;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        tfc_test_checks++;                                                                \
        if (!(cond)) {                                                                    \
            tfc_test_failures++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                                 \
    } while (0)

#define REQUIRE(cond)                                                                     \
    do {                                                                                  \
        tfc_test_checks++;                                                                \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define CHECK_OK(st)                                                                                      \
    do {                                                                                                  \
        tfc_test_checks++;                                                                                \
        if ((st)->code != TFC_OK) {                                                                       \
            tfc_test_failures++;                                                                          \
            fprintf(stderr, "%s:%d: status %s: %s\n", __FILE__, __LINE__, tfc_code_name((st)->code), (st)->msg); \
        }                                                                                                 \
    } while (0)

#define CHECK_CODE(st, c)                                                                                 \
    do {                                                                                                  \
        tfc_test_checks++;                                                                                \
        if ((st)->code != (c)) {                                                                          \
            tfc_test_failures++;                                                                          \
            fprintf(stderr, "%s:%d: expected %s, got %s: %s\n", __FILE__, __LINE__, tfc_code_name(c),      \
                    tfc_code_name((st)->code), (st)->msg);                                                \
        }                                                                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                             \
    do {                                                                                                  \
        double _a = (a), _b = (b);                                                                        \
        tfc_test_checks++;                                                                                \
        if (!(fabs(_a - _b) <= (tol) * (1.0 + fabs(_b)))) {                                               \
            tfc_test_failures++;                                                                          \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n", __FILE__, __LINE__, #a, _a, _b);          \
        }                                                                                                 \
    } while (0)

#define TEST_MAIN_END()                                                                   \
    do {                                                                                  \
        printf("%d checks, %d failed\n", tfc_test_checks, tfc_test_failures);             \
        return tfc_test_failures ? 1 : 0;                                                 \
    } while (0)

#endif
