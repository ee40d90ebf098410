/* The built-in feature set of `parnassus learn`: 16 rules, nine of them
 * conditioned on the previous sonority, over the chorale registers in C
 * (soprano 57..83, alto 50..78, tenor 45..72, bass 33..67: n = 28 * 30 *
 * 29 * 36 = 876,960 sonorities; --ranges 31-84 gives the paper's full
 * space). docs/learning.md explains the choice; in short, every feature is
 * a function of the exact soprano and bass, the alto and tenor pitch
 * classes and where the alto lies relative to the outer voices, so the
 * de-overlap has K' = 285,779 groups (1,153,321 over 31..84; the exact
 * octaves of the inner voices would make it several times more) and
 * m = 2,849 rows (2,898 over 31..84). */
#include "default_features.h"

const char pn_default_features_json[] =
    "{\n"
    "  \"format\": \"parnassus-rules/1\",\n"
    "  \"name\": \"chorale-features\",\n"
    "  \"description\": \"Parnassus's default features for four-voice chorales: pitches and "
    "pitch classes of the voices, intervals, pitch-class sets, where the alto lies; nine "
    "rules conditioned on the previous sonority.\",\n"
    "  \"space\": { \"ranges\": [[57, 83], [50, 78], [45, 72], [33, 67]] },\n"
    "  \"rules\": [\n"
    "    { \"name\": \"pc-set\", \"feature\": \"sort(mod12(w(1,2,3,4)))\",\n"
    "      \"context\": \"sort(mod12(w(1,2,3,4)))\",\n"
    "      \"description\": \"The chord: pitch classes of all voices (a multiset, rests "
    "last), given the previous chord.\" },\n"
    "    { \"name\": \"upper-pc-set\", \"feature\": \"sort(mod12(w(1,2,3)))\",\n"
    "      \"description\": \"Pitch classes of the three upper voices.\" },\n"
    "    { \"name\": \"outer-pcs\", \"feature\": \"mod12(w(4,1))\",\n"
    "      \"context\": \"mod12(w(4,1))\",\n"
    "      \"description\": \"Bass and soprano pitch classes, given the previous pair.\" },\n"
    "    { \"name\": \"inner-pcs\", \"feature\": \"mod12(w(2,3))\",\n"
    "      \"description\": \"Alto and tenor pitch classes.\" },\n"
    "    { \"name\": \"soprano\", \"feature\": \"w(1)\",\n"
    "      \"context\": \"w(1)\",\n"
    "      \"description\": \"Soprano pitch, given the previous soprano pitch (melodic "
    "motion).\" },\n"
    "    { \"name\": \"bass\", \"feature\": \"w(4)\",\n"
    "      \"context\": \"w(4)\",\n"
    "      \"description\": \"Bass pitch, given the previous bass pitch.\" },\n"
    "    { \"name\": \"outer-spacing\", \"feature\": \"abs(diff(w(4,1)))\",\n"
    "      \"description\": \"Distance in semitones between bass and soprano.\" },\n"
    "    { \"name\": \"alto-placement\", \"feature\": \"order(w(4,2,1))\",\n"
    "      \"description\": \"Order of bass, alto and soprano from the bottom: (0,1,2) when "
    "the alto lies between them.\" },\n"
    "    { \"name\": \"soprano-pc\", \"feature\": \"mod12(w(1))\",\n"
    "      \"context\": \"mod12(w(1))\",\n"
    "      \"description\": \"Soprano pitch class, given the previous one.\" },\n"
    "    { \"name\": \"alto-pc\", \"feature\": \"mod12(w(2))\",\n"
    "      \"context\": \"mod12(w(2))\",\n"
    "      \"description\": \"Alto pitch class, given the previous one.\" },\n"
    "    { \"name\": \"tenor-pc\", \"feature\": \"mod12(w(3))\",\n"
    "      \"context\": \"mod12(w(3))\",\n"
    "      \"description\": \"Tenor pitch class, given the previous one.\" },\n"
    "    { \"name\": \"bass-pc\", \"feature\": \"mod12(w(4))\",\n"
    "      \"context\": \"mod12(w(4))\",\n"
    "      \"description\": \"Bass pitch class, given the previous one.\" },\n"
    "    { \"name\": \"outer-interval\", \"feature\": \"mod12(diff(w(4,1)))\",\n"
    "      \"context\": \"mod12(diff(w(4,1)))\",\n"
    "      \"description\": \"Interval from the bass up to the soprano, mod 12, given the "
    "previous one.\" },\n"
    "    { \"name\": \"soprano-alto\", \"feature\": \"mod12(diff(w(2,1)))\",\n"
    "      \"description\": \"Interval from the alto up to the soprano, mod 12.\" },\n"
    "    { \"name\": \"alto-tenor\", \"feature\": \"mod12(diff(w(3,2)))\",\n"
    "      \"description\": \"Interval from the tenor up to the alto, mod 12.\" },\n"
    "    { \"name\": \"tenor-bass\", \"feature\": \"mod12(diff(w(4,3)))\",\n"
    "      \"description\": \"Interval from the bass up to the tenor, mod 12.\" }\n"
    "  ]\n"
    "}\n";
