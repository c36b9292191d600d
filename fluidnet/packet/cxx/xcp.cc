// XCP, the eXplicit Control Protocol of Katabi, Handley & Rohrs (SIGCOMM 2002), as ns-3
// components compiled at run time by cppyy (fluidnet.packet): the protocol Dukkipati & McKeown
// compare RCP with.
//
//   fluidnet::XcpTag        the congestion header as a packet tag: the sender's window H_cwnd
//                           and RTT estimate H_rtt (s), and the feedback H_feedback (+infinity
//                           until a router sets it), window and feedback in packets (segments), as
//                           in the ns-2 implementation the paper used. On an ACK it carries the
//                           echoed feedback.
//   fluidnet::XcpQueueDisc  the XCP router on a link of capacity C (bit/s of IP packets). Every
//                           control interval d (the average RTT of the packets of the last
//                           interval, sum(rtt^2/cwnd) / sum(rtt/cwnd), which is the mean over
//                           flows) the efficiency controller computes the aggregate feedback
//                           phi = alpha d (C - y) - beta Q (y the input rate over the interval, Q
//                           the persistent queue: the smallest queue a departing packet left
//                           during it; in packets of the interval's mean XCP packet size), the
//                           fairness controller the shuffled traffic h = max(0, gamma y d - |phi|)
//                           and the factors xi_p = (h + max(phi, 0)) / (d sum_L rtt_i/cwnd_i) and
//                           xi_n = (h + max(-phi, 0)) / (d sum_L 1) over the interval's XCP
//                           packets; every departing packet gets p_i - n_i = xi_p rtt_i^2 / cwnd_i
//                           - xi_n rtt_i packets of feedback (equal packet sizes s_i), written
//                           into its header when smaller than what is there (Katabi et al. Sec
//                           3.5; alpha = 0.4, beta = 0.226, gamma = 0.1).
//   fluidnet::TcpXcp        the XCP sender: TCP whose window is H_feedback-driven. Every ACK adds
//                           the feedback it echoes, cwnd = max(cwnd + H_feedback, one segment)
//                           (no slow start: a flow starts from its initial window); a fast
//                           retransmit halves the window and a timeout restarts it from one
//                           segment, as TCP (XCP keeps TCP's loss reaction).
//   fluidnet::XcpSink       the receivers: a TCP sink whose every ACK echoes the feedback of the
//                           data packet it acknowledges (one ACK per segment).

namespace fluidnet
{
using namespace ns3;

class XcpTag : public Tag
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::XcpTag")
                                .SetParent<Tag>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<XcpTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 8 + 8 + 8 + 1;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteDouble(cwnd);
        i.WriteDouble(rtt);
        i.WriteDouble(feedback);
        i.WriteU8(echo);
    }

    void Deserialize(TagBuffer i) override
    {
        cwnd = i.ReadDouble();
        rtt = i.ReadDouble();
        feedback = i.ReadDouble();
        echo = i.ReadU8();
    }

    void Print(std::ostream& os) const override
    {
        os << "xcp cwnd=" << cwnd << " rtt=" << rtt << " feedback=" << feedback
           << " echo=" << int(echo);
    }

    double cwnd{0.0};
    double rtt{0.0};
    double feedback{std::numeric_limits<double>::infinity()};
    uint8_t echo{0};
};

class XcpQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::XcpQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<XcpQueueDisc>()
                .AddAttribute("Capacity",
                              "Link capacity at the IP layer (bit/s)",
                              DoubleValue(1e7),
                              MakeDoubleAccessor(&XcpQueueDisc::m_capacity),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Alpha",
                              "Gain alpha on the spare bandwidth",
                              DoubleValue(0.4),
                              MakeDoubleAccessor(&XcpQueueDisc::m_alpha),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Beta",
                              "Gain beta on the persistent queue",
                              DoubleValue(0.226),
                              MakeDoubleAccessor(&XcpQueueDisc::m_beta),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Gamma",
                              "Fraction gamma of the traffic shuffled every interval",
                              DoubleValue(0.1),
                              MakeDoubleAccessor(&XcpQueueDisc::m_gamma),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("InitialInterval",
                              "Control interval before any packet carried an RTT",
                              TimeValue(MilliSeconds(100)),
                              MakeTimeAccessor(&XcpQueueDisc::m_initialInterval),
                              MakeTimeChecker());
        return tid;
    }

    // The input rate of the last control interval as a fraction of the capacity.
    double GetLoad() const
    {
        return m_load;
    }

    // State of the controllers after the last interval, for the tests: d (s), phi and h
    // (packets), xi_p, xi_n and the persistent queue Q (packets).
    double GetInterval() const
    {
        return m_d;
    }

    double GetPhi() const
    {
        return m_phi;
    }

    double GetShuffled() const
    {
        return m_h;
    }

    double GetXiPositive() const
    {
        return m_xiP;
    }

    double GetXiNegative() const
    {
        return m_xiN;
    }

    double GetPersistentQueue() const
    {
        return m_persistent;
    }

    // The feedback (packets) the controllers give a packet of a flow with window `cwnd` (packets)
    // and RTT `rtt` (s).
    double Feedback(double cwnd, double rtt) const
    {
        if (rtt <= 0 || cwnd <= 0)
        {
            return 0.0;
        }
        return m_xiP * rtt * rtt / cwnd - m_xiN * rtt;
    }

  protected:
    void DoDispose() override
    {
        Simulator::Cancel(m_event);
        FifoQueueDisc::DoDispose();
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        if (DropIfFull(item))
        {
            return false;
        }
        double size = item->GetSize();
        m_inputBytes += size;
        XcpTag tag;
        if (item->GetPacket()->PeekPacketTag(tag) && !tag.echo)
        {
            m_xcpBytes += size;
            m_xcpPackets += 1;
            if (tag.rtt > 0 && tag.cwnd > 0)
            {
                double inverseRate = tag.rtt / tag.cwnd;
                m_sumRttByCwnd += inverseRate;
                m_sumRtt2ByCwnd += tag.rtt * inverseRate;
            }
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (!item)
        {
            return item;
        }
        m_minQueue = std::min(m_minQueue, double(GetInternalQueue(0)->GetNBytes()));
        Ptr<Packet> p = item->GetPacket();
        XcpTag tag;
        if (p->PeekPacketTag(tag) && !tag.echo)
        {
            double feedback = Feedback(tag.cwnd, tag.rtt);
            if (feedback < tag.feedback)
            {
                p->RemovePacketTag(tag);
                tag.feedback = feedback;
                p->AddPacketTag(tag);
            }
        }
        return item;
    }

    void InitializeParams() override
    {
        m_d = m_initialInterval.GetSeconds();
        m_last = Simulator::Now();
        m_minQueue = 0.0;
        m_event = Simulator::Schedule(m_initialInterval, &XcpQueueDisc::Control, this);
    }

    void Control()
    {
        double elapsed = (Simulator::Now() - m_last).GetSeconds();
        if (m_xcpPackets > 0)
        {
            m_size = m_xcpBytes / m_xcpPackets;
        }
        double C = m_capacity / (8.0 * m_size); // packets/s
        double y = elapsed > 0 ? m_inputBytes / (m_size * elapsed) : 0.0;
        m_load = y / C;
        if (m_sumRttByCwnd > 0)
        {
            m_d = m_sumRtt2ByCwnd / m_sumRttByCwnd;
        }
        m_persistent = m_minQueue / m_size;
        m_phi = m_alpha * m_d * (C - y) - m_beta * m_persistent;
        m_h = std::max(0.0, m_gamma * y * m_d - std::abs(m_phi));
        m_xiP = m_sumRttByCwnd > 0 ? (m_h + std::max(m_phi, 0.0)) / (m_d * m_sumRttByCwnd) : 0.0;
        m_xiN = m_xcpPackets > 0 ? (m_h + std::max(-m_phi, 0.0)) / (m_d * m_xcpPackets) : 0.0;
        m_inputBytes = 0;
        m_sumRttByCwnd = 0;
        m_sumRtt2ByCwnd = 0;
        m_xcpBytes = 0;
        m_xcpPackets = 0;
        m_minQueue = GetInternalQueue(0)->GetNBytes();
        m_last = Simulator::Now();
        m_event = Simulator::Schedule(Seconds(m_d), &XcpQueueDisc::Control, this);
    }

    double m_capacity{1e7};
    double m_alpha{0.4};
    double m_beta{0.226};
    double m_gamma{0.1};
    Time m_initialInterval;
    double m_d{0.1};
    double m_inputBytes{0.0};
    double m_sumRttByCwnd{0.0};
    double m_sumRtt2ByCwnd{0.0};
    double m_xcpBytes{0.0};
    double m_xcpPackets{0.0};
    double m_size{1000.0};
    double m_minQueue{0.0};
    double m_persistent{0.0};
    double m_phi{0.0};
    double m_h{0.0};
    double m_xiP{0.0};
    double m_xiN{0.0};
    double m_load{0.0};
    Time m_last;
    EventId m_event;
};

NS_OBJECT_ENSURE_REGISTERED(XcpQueueDisc);

class TcpXcp : public TcpCongestionOps, public SocketObserver
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::TcpXcp")
                                .SetParent<TcpCongestionOps>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<TcpXcp>();
        return tid;
    }

    TcpXcp() = default;

    TcpXcp(const TcpXcp& other)
        : TcpCongestionOps(other)
    {
    }

    std::string GetName() const override
    {
        return "TcpXcp";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpXcp>(this);
    }

    bool HasCongControl() const override
    {
        return true;
    }

    void Attach(Ptr<TcpSocketBase> socket) override
    {
        socket->TraceConnectWithoutContext("Tx", MakeCallback(&TcpXcp::OnTx, this));
        socket->TraceConnectWithoutContext("Rx", MakeCallback(&TcpXcp::OnRx, this));
    }

    // Feedback echoed so far (packets) and ACKs that carried it.
    double GetFeedbackSum() const
    {
        return m_feedbackSum;
    }

    uint64_t GetEchoes() const
    {
        return m_echoes;
    }

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        double seg = tcb->m_segmentSize;
        if (!m_started || tcb->m_cWnd.Get() != m_written) // start, or a timeout
        {
            m_cwnd = tcb->m_cWnd.Get();
            m_started = true;
        }
        m_cwnd = std::max(m_cwnd + m_pending * seg, seg);
        m_pending = 0.0;
        m_srtt = tcb->m_srtt.Get().GetSeconds();
        m_segment = seg;
        m_written = static_cast<uint32_t>(std::min(m_cwnd, 4e9));
        tcb->m_cWnd = m_written;
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_RECOVERY && m_started)
        {
            m_cwnd = std::max(m_cwnd / 2, double(tcb->m_segmentSize));
            m_written = static_cast<uint32_t>(m_cwnd);
            tcb->m_cWnd = m_written;
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
    }

  private:
    // every data segment leaves with the congestion header
    void OnTx(Ptr<const Packet> p, const TcpHeader& header, Ptr<const TcpSocketBase> socket)
    {
        if (p->GetSize() == 0)
        {
            return;
        }
        XcpTag tag;
        tag.cwnd = m_started ? m_cwnd / m_segment : 0.0;
        tag.rtt = m_srtt;
        p->AddPacketTag(tag);
    }

    // every ACK brings the feedback the receiver echoed (applied in CongControl, which the
    // socket calls after it processed the ACK)
    void OnRx(Ptr<const Packet> p, const TcpHeader& header, Ptr<const TcpSocketBase> socket)
    {
        XcpTag tag;
        if ((header.GetFlags() & TcpHeader::ACK) && p->PeekPacketTag(tag) && tag.echo &&
            std::isfinite(tag.feedback))
        {
            m_pending += tag.feedback;
            m_feedbackSum += tag.feedback;
            ++m_echoes;
        }
    }

    bool m_started{false};
    double m_cwnd{0.0};
    double m_srtt{0.0};
    double m_segment{1.0};
    double m_pending{0.0};
    double m_feedbackSum{0.0};
    uint64_t m_echoes{0};
    uint32_t m_written{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpXcp);

class XcpSink : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::XcpSink")
                .SetParent<Application>()
                .SetGroupName("Fluidnet")
                .AddConstructor<XcpSink>()
                .AddTraceSource("RxWithAddresses",
                                "A packet received, with its addresses",
                                MakeTraceSourceAccessor(&XcpSink::m_rxTrace),
                                "ns3::Packet::TwoAddressTracedCallback");
        return tid;
    }

    void Setup(uint16_t port)
    {
        m_port = port;
    }

  protected:
    void DoDispose() override
    {
        m_socket = nullptr;
        m_accepted.clear();
        Application::DoDispose();
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
        m_socket->Listen();
        m_socket->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&XcpSink::Accept, this));
    }

    void StopApplication() override
    {
        for (auto& s : m_accepted)
        {
            s->Close();
        }
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void Accept(Ptr<Socket> s, const Address& from)
    {
        s->SetRecvCallback(MakeCallback(&XcpSink::Receive, this));
        s->TraceConnectWithoutContext("Rx", MakeCallback(&XcpSink::OnRx, this));
        s->TraceConnectWithoutContext("Tx", MakeCallback(&XcpSink::OnTx, this));
        m_accepted.push_back(s);
    }

    void Receive(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        Address from;
        Address local;
        s->GetSockName(local);
        while ((p = s->RecvFrom(from)))
        {
            if (p->GetSize() > 0)
            {
                m_rxTrace(p, from, local);
            }
        }
    }

    // the feedback of the last data packet of the connection
    void OnRx(Ptr<const Packet> p, const TcpHeader& header, Ptr<const TcpSocketBase> socket)
    {
        XcpTag tag;
        if (p->GetSize() > 0 && p->PeekPacketTag(tag) && !tag.echo)
        {
            m_feedback[PeekPointer(socket)] = tag.feedback;
        }
    }

    // echoed by the ACK that follows it
    void OnTx(Ptr<const Packet> p, const TcpHeader& header, Ptr<const TcpSocketBase> socket)
    {
        auto found = m_feedback.find(PeekPointer(socket));
        if (p->GetSize() == 0 && (header.GetFlags() & TcpHeader::ACK) && found != m_feedback.end())
        {
            XcpTag tag;
            tag.echo = 1;
            tag.feedback = found->second;
            p->AddPacketTag(tag);
            m_feedback.erase(found);
        }
    }

    uint16_t m_port{9};
    Ptr<Socket> m_socket;
    std::vector<Ptr<Socket>> m_accepted;
    std::map<const TcpSocketBase*, double> m_feedback;
    TracedCallback<Ptr<const Packet>, const Address&, const Address&> m_rxTrace;
};

NS_OBJECT_ENSURE_REGISTERED(XcpSink);

} // namespace fluidnet
