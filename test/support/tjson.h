/*
 * tjson: JSON literals for unit tests, written with single quotes so they
 * read cleanly inside C strings: tjson("{'cpu':'1'}") parses {"cpu":"1"}.
 * Any JSON value is accepted (JSON_DECODE_ANY). Bad JSON fails the running
 * cmocka test with the parser's message. Returns a new reference.
 */
#ifndef KKS_TEST_SUPPORT_TJSON_H
#define KKS_TEST_SUPPORT_TJSON_H

#include <jansson.h>

json_t *tjson(const char *single_quoted);

#endif
