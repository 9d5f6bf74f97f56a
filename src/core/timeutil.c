/* SPDX-License-Identifier: MIT */
/*
 * timeutil.c - the clocks and timestamp forms of timeutil.h. Calendar
 * arithmetic is done here (days from/to civil dates in the proleptic
 * Gregorian calendar) rather than with timegm/gmtime_r, so it does not depend
 * on the C library's time zone state or on the width of time_t.
 */
#include "timeutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "toolgate.h"

/* ECMAScript's Date range, +-8.64e15 ms (about +-275760 years): wide enough
 * for any real timestamp, narrow enough that arithmetic never overflows. */
#define TG_TIME_MS_LIMIT 8640000000000000LL
#define MS_PER_DAY 86400000LL

int64_t tg__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t tg__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* The inverse: the civil date of a day count. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30,
                                          31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

static void put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
}

int tg__time_format(int64_t ms, char out[TG_TIME_MAX])
{
    if (ms > TG_TIME_MS_LIMIT)
        ms = TG_TIME_MS_LIMIT;
    if (ms < -TG_TIME_MS_LIMIT)
        ms = -TG_TIME_MS_LIMIT;
    /* Floor division, so times before 1970 land on the right day. */
    int64_t days = ms / MS_PER_DAY;
    int64_t rem = ms % MS_PER_DAY;
    if (rem < 0) {
        rem += MS_PER_DAY;
        days--;
    }
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    unsigned msec = (unsigned)(rem % 1000);
    unsigned sec = (unsigned)(rem / 1000 % 60);
    unsigned min = (unsigned)(rem / 60000 % 60);
    unsigned hour = (unsigned)(rem / 3600000);
    if (y < 0 || y > 9999)
        return snprintf(out, TG_TIME_MAX,
                        "%+07lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)y,
                        mo, d, hour, min, sec, msec);
    /* The common case without printf: this runs for every record written. */
    put2(out, (unsigned)(y / 100));
    put2(out + 2, (unsigned)(y % 100));
    out[4] = '-';
    put2(out + 5, mo);
    out[7] = '-';
    put2(out + 8, d);
    out[10] = 'T';
    put2(out + 11, hour);
    out[13] = ':';
    put2(out + 14, min);
    out[16] = ':';
    put2(out + 17, sec);
    out[19] = '.';
    out[20] = (char)('0' + msec / 100);
    put2(out + 21, msec % 100);
    out[23] = 'Z';
    out[24] = '\0';
    return 24;
}

/* Reads exactly n decimal digits at *p into *v; advances *p. */
static bool digits(const char **p, int n, unsigned *v)
{
    unsigned r = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        r = r * 10 + (unsigned)(c - '0');
    }
    *p += n;
    *v = r;
    return true;
}

static bool expect(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

int tg__time_parse(const char *s, int64_t *ms)
{
    unsigned y, mo, d, h, mi, sec, frac = 0;
    const char *p = s;
    if (s == NULL)
        return TG_EINVAL;
    if (!digits(&p, 4, &y) || !expect(&p, '-') || !digits(&p, 2, &mo) ||
        !expect(&p, '-') || !digits(&p, 2, &d))
        return TG_EINVAL;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return TG_EINVAL;
    p++;
    if (!digits(&p, 2, &h) || !expect(&p, ':') || !digits(&p, 2, &mi) ||
        !expect(&p, ':') || !digits(&p, 2, &sec))
        return TG_EINVAL;
    if (*p == '.') {
        /* One or more digits; milliseconds keep the first three (truncated,
         * as a clock shows them). */
        int nd = 0;
        p++;
        if (*p < '0' || *p > '9')
            return TG_EINVAL;
        for (; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 3)
                frac = frac * 10 + (unsigned)(*p - '0');
        for (; nd < 3; nd++)
            frac *= 10;
    }
    int off_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1;
        unsigned oh, om;
        p++;
        if (!digits(&p, 2, &oh) || !expect(&p, ':') || !digits(&p, 2, &om) ||
            oh > 23 || om > 59)
            return TG_EINVAL;
        off_min = sign * (int)(oh * 60 + om);
    } else {
        return TG_EINVAL;
    }
    if (*p != '\0')
        return TG_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
        mi > 59 || sec > 60)
        return TG_EINVAL;
    if (sec == 60)
        sec = 59; /* a leap second: POSIX time has no slot for it */
    int64_t days = days_from_civil(y, mo, d);
    int64_t t = days * MS_PER_DAY + (int64_t)h * 3600000 + (int64_t)mi * 60000 +
                (int64_t)sec * 1000 + frac;
    t -= (int64_t)off_min * 60000;
    /* An offset can carry the instant outside years 0000-9999, which no
     * RFC 3339 timestamp can name (so it could not be written back). */
    if (t < days_from_civil(0, 1, 1) * MS_PER_DAY ||
        t >= days_from_civil(10000, 1, 1) * MS_PER_DAY)
        return TG_EINVAL;
    *ms = t;
    return 0;
}

int tg__time_from_json(const json_t *v, int64_t *ms)
{
    double x;
    if (v == NULL)
        return TG_EINVAL;
    if (json_is_string(v))
        return tg__time_parse(json_string_value(v), ms);
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i >= 100000000000LL) { /* 1e11: milliseconds */
            if (i > TG_TIME_MS_LIMIT)
                return TG_EINVAL;
            *ms = i;
            return 0;
        }
        if (i < -TG_TIME_MS_LIMIT / 1000)
            return TG_EINVAL;
        *ms = i * 1000;
        return 0;
    }
    if (!json_is_real(v))
        return TG_EINVAL;
    x = json_real_value(v);
    if (!isfinite(x))
        return TG_EINVAL;
    if (x < 1e11)
        x *= 1000.0; /* seconds, the fraction kept to the millisecond */
    if (x > (double)TG_TIME_MS_LIMIT || x < -(double)TG_TIME_MS_LIMIT)
        return TG_EINVAL;
    /* Round to the nearest millisecond (1.001 * 1000 is 1000.999...), half
     * away from zero; done by hand so the core needs no libm. */
    int64_t t = (int64_t)x;
    double rest = x - (double)t;
    if (rest >= 0.5)
        t++;
    else if (rest <= -0.5)
        t--;
    *ms = t;
    return 0;
}
