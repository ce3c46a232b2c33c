/*
 * pingpong: the cost of a round trip between two processes over a unix
 * socketpair, in plain C (no Go runtime): the floor under the device
 * engine's per-request overhead on this machine (docs/DEVICE_PERF.md, "Where the rest goes").
 *
 *   cc -O2 -o pingpong test/bench/pingpong.c && ./pingpong
 *   taskset -c 0 ./pingpong        # both ends on one CPU
 *   ./pingpong & ./pingpong & wait  # two pairs sharing the CPUs
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
int main(){int sv[2];socketpair(AF_UNIX,SOCK_STREAM,0,sv);int N=50000;char b[64];
struct timespec t0,t1;clock_gettime(CLOCK_MONOTONIC,&t0);
pid_t p=fork(); if(p==0){for(int i=0;i<N;i++){read(sv[1],b,64);write(sv[1],b,64);}_exit(0);}
for(int i=0;i<N;i++){write(sv[0],b,64);read(sv[0],b,64);}
int st; waitpid(p,&st,0); clock_gettime(CLOCK_MONOTONIC,&t1);
struct rusage ru,rc;getrusage(RUSAGE_SELF,&ru);getrusage(RUSAGE_CHILDREN,&rc);
double wall=(t1.tv_sec-t0.tv_sec)*1e9+(t1.tv_nsec-t0.tv_nsec);
double cs=(ru.ru_utime.tv_sec+ru.ru_stime.tv_sec)*1e9+(ru.ru_utime.tv_usec+ru.ru_stime.tv_usec)*1e3;
double cc=(rc.ru_utime.tv_sec+rc.ru_stime.tv_sec)*1e9+(rc.ru_utime.tv_usec+rc.ru_stime.tv_usec)*1e3;
printf("C ping-pong: %.1f us/rtt wall, cpu parent %.1f us, child %.1f us per rtt\n",wall/N/1e3,cs/N/1e3,cc/N/1e3);}
